// The /stats debug page: every counter and gauge of a StatsStore as sorted `name: value` lines.
import type { StatsStore } from './stats-store.js';

export function dumpStats(store: StatsStore): string {
  const lines: string[] = [];
  for (const c of store.allCounters()) lines.push(`${c.name}: ${c.value()}`);
  for (const g of store.allGauges()) lines.push(`${g.name}: ${g.value()}`);
  lines.sort();
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}
