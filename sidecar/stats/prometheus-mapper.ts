// PROMETHEUS_MAPPER_YAML: a statsd_exporter mapping file (the subset upstream's sink uses) turned into a stat mapper.
import { parse } from 'yaml';
import { SettingsError } from '../settings/settings-error.js';
import { escapeMetricName, type MappedStat, type StatKind } from './prometheus.js';

/** Maps one stat; null means the mapping says `action: drop`. */
export type StatMapper = (name: string, kind: StatKind) => MappedStat | null;

interface Mapping {
  readonly pattern: RegExp;
  readonly name: string;
  readonly labels: readonly (readonly [string, string])[];
  readonly kind: StatKind | undefined;
  readonly drop: boolean;
}

const METRIC_TYPES: Readonly<Record<string, StatKind>> = {
  counter: 'counter',
  gauge: 'gauge',
  timer: 'timer',
  observer: 'timer',
  histogram: 'timer',
  distribution: 'timer',
};

/** statsd_exporter glob: `*` stands for one dot-separated component. */
function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('([^.]+)');
  return new RegExp(`^${escaped}$`);
}

function substitute(template: string, match: RegExpExecArray): string {
  return template.replace(/\$\{?(\d+)\}?/g, (whole, digits: string) => match[Number(digits)] ?? whole);
}

function fail(file: string, message: string): never {
  throw new SettingsError('invalid_value', 'PROMETHEUS_MAPPER_YAML', `PROMETHEUS_MAPPER_YAML ${file}: ${message}`);
}

/**
 * Parses a mapping file: `mappings: [{match, name, labels, match_type: glob|regex, match_metric_type, action}]`.
 * Timer/observer options (`observer_type`, buckets, quantiles) are accepted and ignored: timers are histograms.
 * @throws SettingsError naming the file and the entry at fault
 */
export function parseMapperYaml(text: string, file: string): StatMapper {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    fail(file, (err as Error).message.split('\n')[0] ?? 'invalid YAML');
  }
  const list = (doc as { mappings?: unknown } | null)?.mappings;
  if (!Array.isArray(list)) fail(file, 'expected a top-level `mappings:` list');
  const mappings: Mapping[] = list.map((raw: unknown, i: number) => {
    const entry = raw as Record<string, unknown> | null;
    if (typeof entry !== 'object' || entry === null) fail(file, `mapping ${i + 1} is not a map`);
    const match = entry.match;
    if (typeof match !== 'string' || match === '') fail(file, `mapping ${i + 1} has no match`);
    const drop = entry.action === 'drop';
    const name = entry.name;
    if (!drop && (typeof name !== 'string' || name === '')) fail(file, `mapping ${i + 1} (${match}) has no name`);
    let pattern: RegExp;
    try {
      pattern = entry.match_type === 'regex' ? new RegExp(match) : globToRegExp(match);
    } catch {
      fail(file, `mapping ${i + 1} has an invalid regex ${JSON.stringify(match)}`);
    }
    const labelsRaw = entry.labels ?? {};
    if (typeof labelsRaw !== 'object' || labelsRaw === null || Array.isArray(labelsRaw)) {
      fail(file, `mapping ${i + 1} (${match}) has labels that are not a map`);
    }
    const labels = Object.entries(labelsRaw as Record<string, unknown>).map(([k, v]) => [k, String(v)] as const);
    const typeName = entry.match_metric_type;
    let kind: StatKind | undefined;
    if (typeName !== undefined) {
      kind = METRIC_TYPES[String(typeName)];
      if (kind === undefined) fail(file, `mapping ${i + 1} has an unknown match_metric_type ${String(typeName)}`);
    }
    return { pattern, name: typeof name === 'string' ? name : '', labels, kind, drop };
  });
  return (statName, kind) => {
    for (const m of mappings) {
      if (m.kind !== undefined && m.kind !== kind) continue;
      const match = m.pattern.exec(statName);
      if (match === null) continue;
      if (m.drop) return null;
      const labels: Record<string, string> = {};
      for (const [key, value] of m.labels) labels[key] = substitute(value, match);
      return {
        name: escapeMetricName(substitute(m.name, match)),
        labels,
        labelNames: m.labels.map(([key]) => key),
        seconds: kind === 'timer',
      };
    }
    return { name: escapeMetricName(statName), labels: {}, seconds: kind === 'timer' };
  };
}
