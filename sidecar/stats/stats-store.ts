// In-process counters, gauges and timers, aggregated here and flushed by sinks (statsd, Prometheus, /stats).
// Like upstream's gostats: updating a stat is a field increment; names are resolved once and cached by callers.

export interface Counter {
  readonly name: string;
  add(n: number): void;
  inc(): void;
  /** Total since start. */
  value(): number;
}

export interface Gauge {
  readonly name: string;
  set(n: number): void;
  add(n: number): void;
  value(): number;
}

export interface Timer {
  readonly name: string;
  /** Records one duration in milliseconds. */
  recordMs(ms: number): void;
  /** Durations recorded since the last drain, then cleared (sinks call this on flush). */
  drain(): number[];
  /** Count of all recordings since start. */
  count(): number;
}

class CounterImpl implements Counter {
  private total = 0;
  constructor(readonly name: string) {}
  add(n: number): void {
    this.total += n;
  }
  inc(): void {
    this.total += 1;
  }
  value(): number {
    return this.total;
  }
}

class GaugeImpl implements Gauge {
  private current = 0;
  constructor(readonly name: string) {}
  set(n: number): void {
    this.current = n;
  }
  add(n: number): void {
    this.current += n;
  }
  value(): number {
    return this.current;
  }
}

// Bounded so that a flush interval with a traffic spike cannot grow memory without limit.
const MAX_PENDING_TIMINGS = 10_000;

class TimerImpl implements Timer {
  private pending: number[] = [];
  private total = 0;
  constructor(readonly name: string) {}
  recordMs(ms: number): void {
    this.total += 1;
    if (this.pending.length < MAX_PENDING_TIMINGS) this.pending.push(ms);
  }
  drain(): number[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }
  count(): number {
    return this.total;
  }
}

/**
 * Serialises tags into a stat name the way gostats does: `name.__k1=v1.__k2=v2`, tags sorted by key.
 * EXTRA_TAGS apply to every stat of the store.
 */
export function nameWithTags(name: string, tags: Readonly<Record<string, string>>): string {
  const keys = Object.keys(tags).sort();
  if (keys.length === 0) return name;
  return name + keys.map((k) => `.__${k}=${tags[k]}`).join('');
}

export class StatsStore {
  private readonly counters = new Map<string, Counter>();
  private readonly gauges = new Map<string, Gauge>();
  private readonly timers = new Map<string, Timer>();

  /** @param extraTags tags added to every stat name (EXTRA_TAGS) */
  constructor(private readonly extraTags: Readonly<Record<string, string>> = {}) {}

  /** Returns the counter of that name, creating it on first use (same object every time). */
  counter(name: string): Counter {
    const full = nameWithTags(name, this.extraTags);
    let c = this.counters.get(full);
    if (c === undefined) {
      c = new CounterImpl(full);
      this.counters.set(full, c);
    }
    return c;
  }

  gauge(name: string): Gauge {
    const full = nameWithTags(name, this.extraTags);
    let g = this.gauges.get(full);
    if (g === undefined) {
      g = new GaugeImpl(full);
      this.gauges.set(full, g);
    }
    return g;
  }

  timer(name: string): Timer {
    const full = nameWithTags(name, this.extraTags);
    let t = this.timers.get(full);
    if (t === undefined) {
      t = new TimerImpl(full);
      this.timers.set(full, t);
    }
    return t;
  }

  allCounters(): IterableIterator<Counter> {
    return this.counters.values();
  }
  allGauges(): IterableIterator<Gauge> {
    return this.gauges.values();
  }
  allTimers(): IterableIterator<Timer> {
    return this.timers.values();
  }
}
