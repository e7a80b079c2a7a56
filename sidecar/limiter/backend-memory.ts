// The embedded counter store: one process, fixed windows by key, TTLs, a cheap expiry sweep and a hard key bound.
import type { Clock } from '../clock.js';
import { BackendError } from '../errors.js';
import type { Counter, Gauge, StatsStore } from '../stats/stats-store.js';
import type { CounterBackend, CounterOp } from './backend.js';
import { ExpiryQueue } from './expiry-queue.js';

export const DEFAULT_MEMORY_MAX_KEYS = 250_000;
export const DEFAULT_MEMORY_SWEEP_INTERVAL_MS = 1000;

export interface MemoryBackendOptions {
  readonly clock: Clock;
  /**
   * Hard bound on stored keys (> 0; default 250 000: measured ≈ 270 bytes per 55-character key, so ≈ 70 MB). When full, expired
   * keys are freed first; if none are, the key that expires soonest is evicted (Redis' volatile-ttl policy).
   */
  readonly maxKeys?: number;
  /** How often expired keys are freed, in ms (default 1000); the timer does not keep the process alive. */
  readonly sweepIntervalMs?: number;
  /** Receives `ratelimit.memory.keys` (gauge) and `ratelimit.memory.evicted` (counter) when given. */
  readonly stats?: StatsStore;
}

export interface MemoryBackend extends CounterBackend {
  /** Frees every key expired at the clock's now; the timer calls this. */
  sweep(): void;
  /** Stored keys, expired-but-not-yet-swept included. */
  size(): number;
}

interface Entry {
  count: number;
  expiresAtMs: number;
  /** The expiry-queue bucket the key is listed in (≤ its real expiry second). */
  bucket: number;
}

const expirySecond = (expiresAtMs: number): number => Math.ceil(expiresAtMs / 1000);

export function createMemoryBackend(options: MemoryBackendOptions): MemoryBackend {
  const clock = options.clock;
  const maxKeys = options.maxKeys ?? DEFAULT_MEMORY_MAX_KEYS;
  if (!(maxKeys > 0)) throw new RangeError('memory backend maxKeys must be > 0');
  const entries = new Map<string, Entry>();
  const queue = new ExpiryQueue();
  const keysGauge: Gauge | undefined = options.stats?.gauge('ratelimit.memory.keys');
  const evicted: Counter | undefined = options.stats?.counter('ratelimit.memory.evicted');
  let closed = false;

  const drop = (key: string, entry: Entry): void => {
    entries.delete(key);
    queue.remove(key, entry.bucket);
  };

  /** Processes due buckets; with evictOne, also evicts the single soonest-expiring live key. */
  const sweepAt = (nowMs: number, evictOne: boolean): void => {
    for (;;) {
      const second = queue.earliest();
      if (second === undefined) return;
      const due = second * 1000 <= nowMs;
      if (!due && !evictOne) return;
      for (const key of queue.keysOf(second)) {
        const entry = entries.get(key);
        if (entry === undefined) {
          queue.remove(key, second);
          continue;
        }
        if (entry.expiresAtMs <= nowMs) {
          drop(key, entry);
          continue;
        }
        const real = expirySecond(entry.expiresAtMs);
        if (real !== second) {
          // The TTL was extended after listing: move the key to its real bucket.
          queue.remove(key, second);
          entry.bucket = real;
          queue.add(key, real);
        } else if (evictOne) {
          drop(key, entry);
          evicted?.inc();
          return;
        }
      }
    }
  };

  const publish = (): void => keysGauge?.set(entries.size);

  const timer = setInterval(() => {
    sweepAt(clock.nowMs(), false);
    publish();
  }, options.sweepIntervalMs ?? DEFAULT_MEMORY_SWEEP_INTERVAL_MS);
  timer.unref();

  const checkOpen = (): void => {
    if (closed) throw new BackendError('memory backend is closed');
  };

  const liveEntry = (key: string, nowMs: number): Entry | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs > nowMs) return entry;
    drop(key, entry);
    return undefined;
  };

  const incrementOne = (op: CounterOp, nowMs: number): number => {
    const expiresAtMs = nowMs + op.ttlSeconds * 1000;
    let entry = liveEntry(op.key, nowMs);
    if (entry === undefined) {
      if (entries.size >= maxKeys) {
        sweepAt(nowMs, false);
        if (entries.size >= maxKeys) sweepAt(nowMs, true);
      }
      entry = { count: op.hits, expiresAtMs, bucket: expirySecond(expiresAtMs) };
      entries.set(op.key, entry);
      queue.add(op.key, entry.bucket);
      return entry.count;
    }
    entry.count += op.hits;
    entry.expiresAtMs = expiresAtMs;
    const real = expirySecond(expiresAtMs);
    if (real < entry.bucket) {
      // A shorter TTL than before (smaller jitter): list it earlier now so the eviction order stays right.
      queue.remove(op.key, entry.bucket);
      entry.bucket = real;
      queue.add(op.key, real);
    }
    return entry.count;
  };

  return {
    async increment(ops) {
      checkOpen();
      const nowMs = clock.nowMs();
      const out = new Array<number>(ops.length);
      for (let i = 0; i < ops.length; i++) out[i] = incrementOne(ops[i]!, nowMs);
      return out;
    },
    async get(ops) {
      checkOpen();
      const nowMs = clock.nowMs();
      return ops.map((op) => liveEntry(op.key, nowMs)?.count ?? 0);
    },
    async close() {
      closed = true;
      clearInterval(timer);
      entries.clear();
    },
    sweep() {
      sweepAt(clock.nowMs(), false);
      publish();
    },
    size: () => entries.size,
  };
}
