// One flush of a StatsStore as gostats does it: counter deltas since the previous flush, gauge values, timings.
import type { StatsStore } from './stats-store.js';

export interface StatsFlush {
  /** Counters whose value changed since the previous flush, with the change. */
  readonly counters: readonly (readonly [name: string, delta: number])[];
  /** Every gauge with its current value. */
  readonly gauges: readonly (readonly [name: string, value: number])[];
  /** Every duration recorded since the previous flush, in ms. */
  readonly timers: readonly (readonly [name: string, ms: readonly number[]])[];
}

/** Returns a function that takes one flush; each call consumes the deltas and timings it reports. */
export function createStatsFlusher(store: StatsStore): () => StatsFlush {
  const lastCounterValues = new Map<string, number>();
  return () => {
    const counters: [string, number][] = [];
    for (const c of store.allCounters()) {
      const total = c.value();
      const delta = total - (lastCounterValues.get(c.name) ?? 0);
      lastCounterValues.set(c.name, total);
      if (delta !== 0) counters.push([c.name, delta]);
    }
    const gauges: [string, number][] = [];
    for (const g of store.allGauges()) gauges.push([g.name, g.value()]);
    const timers: [string, number[]][] = [];
    for (const t of store.allTimers()) {
      const ms = t.drain();
      if (ms.length > 0) timers.push([t.name, ms]);
    }
    return { counters, gauges, timers };
  };
}
