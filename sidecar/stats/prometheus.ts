// Prometheus exposition of a StatsStore with upstream's default statsd→Prometheus mapping (spec §2.16), at scrape time.
import http from 'node:http';
import client from 'prom-client';
import type { Logger } from '../logger.js';
import { listen, pathOf, sendPlainError, stopServer } from '../server/http-util.js';
import type { StatsStore } from './stats-store.js';

export type StatKind = 'counter' | 'gauge' | 'timer';
type Kind = StatKind;

/** A stat name after mapping: the Prometheus name and its labels. */
export interface MappedStat {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Timers are converted to seconds by the default mapper (×0.001) unless configured otherwise. */
  readonly seconds: boolean;
  /** Every label name this metric can carry (default: the keys of `labels`). */
  readonly labelNames?: readonly string[];
}

const RATE_LIMIT_STATS = new Set(['near_limit', 'over_limit', 'total_hits', 'within_limit', 'shadow_mode']);
const RATE_LIMIT_LABELS = ['domain', 'key1', 'key2'] as const;

/** statsd_exporter's escaping of an unmapped name: every character outside [a-zA-Z0-9_] becomes `_`. */
export function escapeMetricName(name: string): string {
  const escaped = name.replace(/[^a-zA-Z0-9_]/g, '_');
  return /^[0-9]/.test(escaped) ? '_' + escaped : escaped;
}

/** Splits gostats' serialised tags (`name.__k=v.__k2=v2`) off a stat name. */
export function splitTags(full: string): { name: string; tags: Record<string, string> } {
  const tags: Record<string, string> = {};
  const marker = full.indexOf('.__');
  if (marker < 0) return { name: full, tags };
  for (const part of full.slice(marker + 3).split('.__')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return { name: full.slice(0, marker), tags };
}

/**
 * Upstream's default mapper. A `*` in its globs is one dot-separated component, so rate limit stats map only
 * for 2- and 3-segment keys; everything else keeps its escaped statsd name and no labels.
 */
export function mapStat(name: string, kind: Kind): MappedStat {
  const parts = name.split('.');
  const nonEmpty = parts.every((p) => p !== '');
  if (nonEmpty && kind === 'counter') {
    if (parts[0] === 'ratelimit' && parts[1] === 'service') {
      const stat = parts[parts.length - 1] ?? '';
      if (parts[2] === 'rate_limit' && (parts.length === 6 || parts.length === 7) && RATE_LIMIT_STATS.has(stat)) {
        const labels: Record<string, string> = { domain: parts[3] ?? '', key1: parts[4] ?? '' };
        if (parts.length === 7) labels.key2 = parts[5] ?? '';
        return { name: `ratelimit_service_rate_limit_${stat}`, labels, seconds: false };
      }
      if (parts.length === 5 && parts[2] === 'call' && parts[3] === 'should_rate_limit') {
        return {
          name: 'ratelimit_service_should_rate_limit_error',
          labels: { err_type: parts[4] ?? '' },
          seconds: false,
        };
      }
      if (parts.length === 3 && (parts[2] === 'config_load_success' || parts[2] === 'config_load_error')) {
        return { name: `ratelimit_service_${parts[2]}`, labels: {}, seconds: false };
      }
    }
    if (parts.length === 3 && parts[0] === 'ratelimit_server' && parts[2] === 'total_requests') {
      return { name: 'ratelimit_service_total_requests', labels: { grpc_method: parts[1] ?? '' }, seconds: false };
    }
  }
  if (
    nonEmpty &&
    kind === 'timer' &&
    parts.length === 3 &&
    parts[0] === 'ratelimit_server' &&
    parts[2] === 'response_time'
  ) {
    return { name: 'ratelimit_service_response_time_seconds', labels: { grpc_method: parts[1] ?? '' }, seconds: true };
  }
  return { name: escapeMetricName(name), labels: {}, seconds: false };
}

function labelNamesFor(mappedName: string, mapped: MappedStat, extraTagKeys: readonly string[]): string[] {
  const base =
    mapped.labelNames !== undefined
      ? [...mapped.labelNames]
      : mappedName.startsWith('ratelimit_service_rate_limit_') && 'domain' in mapped.labels
        ? [...RATE_LIMIT_LABELS]
        : Object.keys(mapped.labels);
  return [...base, ...extraTagKeys.filter((k) => !base.includes(k))];
}

export interface PrometheusExporterOptions {
  /** EXTRA_TAGS keys: they become labels on every metric. */
  readonly extraTagKeys: readonly string[];
  /** PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS: keep response_time in milliseconds. */
  readonly responseTimeAsMilliseconds: boolean;
  /** PROMETHEUS_MAPPER_YAML's mapper; upstream's default mapping (mapStat) when absent. null from it drops a stat. */
  readonly mapper?: (name: string, kind: StatKind) => MappedStat | null;
}

export interface PrometheusExporter {
  /** The text exposition of every stat, computed from the store now. */
  metrics(): Promise<string>;
  readonly contentType: string;
}

export function createPrometheusExporter(store: StatsStore, options: PrometheusExporterOptions): PrometheusExporter {
  const registry = new client.Registry();
  const map = options.mapper ?? mapStat;
  const counters = new Map<string, client.Counter>();
  const gauges = new Map<string, client.Gauge>();
  const histograms = new Map<string, client.Histogram>();
  // Each metric name is registered once with one label set; a later stat with another kind under that name is skipped.
  const kindOf = new Map<string, Kind>();

  const claim = (name: string, kind: Kind): boolean => {
    const existing = kindOf.get(name);
    if (existing === undefined) {
      kindOf.set(name, kind);
      return true;
    }
    return existing === kind;
  };

  const sync = (): void => {
    for (const c of counters.values()) c.reset();
    for (const g of gauges.values()) g.reset();
    for (const c of store.allCounters()) {
      const { name, tags } = splitTags(c.name);
      const mapped = map(name, 'counter');
      if (mapped === null) continue;
      if (!claim(mapped.name, 'counter')) continue;
      let metric = counters.get(mapped.name);
      if (metric === undefined) {
        metric = new client.Counter({
          name: mapped.name,
          help: `statsd counter ${mapped.name}`,
          labelNames: labelNamesFor(mapped.name, mapped, options.extraTagKeys),
          registers: [registry],
        });
        counters.set(mapped.name, metric);
      }
      metric.inc({ ...mapped.labels, ...tags }, c.value());
    }
    for (const g of store.allGauges()) {
      const { name, tags } = splitTags(g.name);
      const mapped = map(name, 'gauge');
      if (mapped === null) continue;
      if (!claim(mapped.name, 'gauge')) continue;
      let metric = gauges.get(mapped.name);
      if (metric === undefined) {
        metric = new client.Gauge({
          name: mapped.name,
          help: `statsd gauge ${mapped.name}`,
          labelNames: labelNamesFor(mapped.name, mapped, options.extraTagKeys),
          registers: [registry],
        });
        gauges.set(mapped.name, metric);
      }
      metric.set({ ...mapped.labels, ...tags }, g.value());
    }
    for (const t of store.allTimers()) {
      const { name, tags } = splitTags(t.name);
      const mapped = map(name, 'timer');
      if (mapped === null) continue;
      const seconds = mapped.seconds && !options.responseTimeAsMilliseconds;
      if (!claim(mapped.name, 'timer')) continue;
      let metric = histograms.get(mapped.name);
      if (metric === undefined) {
        metric = new client.Histogram({
          name: mapped.name,
          help: `statsd timer ${mapped.name}`,
          labelNames: labelNamesFor(mapped.name, mapped, options.extraTagKeys),
          // statsd_exporter's default buckets are Prometheus' DefBuckets (seconds).
          buckets: seconds
            ? [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
            : [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
          registers: [registry],
        });
        histograms.set(mapped.name, metric);
      }
      const labels = { ...mapped.labels, ...tags };
      for (const ms of t.drain()) metric.observe(labels, seconds ? ms / 1000 : ms);
    }
  };

  return {
    contentType: registry.contentType,
    metrics: async () => {
      sync();
      return registry.metrics();
    },
  };
}

export interface RunningPrometheusServer {
  readonly port: number;
  stop(graceMs: number): Promise<void>;
}

export async function startPrometheusServer(
  host: string,
  port: number,
  path: string,
  exporter: PrometheusExporter,
  logger: Logger,
): Promise<RunningPrometheusServer> {
  const server = http.createServer((req, res) => {
    req.resume();
    if (pathOf(req) !== path) {
      sendPlainError(res, 404, '404 page not found');
      return;
    }
    exporter.metrics().then(
      (body) => {
        res.writeHead(200, { 'Content-Type': exporter.contentType });
        res.end(body);
      },
      (err: unknown) => {
        logger.error(`prometheus scrape failed: ${String(err)}`);
        sendPlainError(res, 500, 'Internal Server Error');
      },
    );
  });
  const bound = await listen(server, host, port, 'Prometheus');
  return { port: bound, stop: (graceMs) => stopServer(server, graceMs) };
}
