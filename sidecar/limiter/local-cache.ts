// The in-process cache of keys known to be over limit in their window (upstream freecache use, spec §2.8).
import type { Clock } from '../clock.js';
import type { Gauge, StatsStore } from '../stats/stats-store.js';

/**
 * Approximate bytes charged per entry on top of the key's length in characters: the Map slot, the entry object
 * (expiry and access time) and string header. Cache keys are ASCII in practice, so characters ≈ bytes.
 */
export const LOCAL_CACHE_ENTRY_OVERHEAD_BYTES = 64;

export interface LocalOverLimitCache {
  /** True while `key` is cached and unexpired. Counts a lookup and a hit or a miss. */
  has(key: string): boolean;
  /** Caches `key` for ttlSeconds (the full window length: the key embeds its window start, so that is safe). */
  add(key: string, ttlSeconds: number): void;
  /** Approximate bytes in use (see LOCAL_CACHE_ENTRY_OVERHEAD_BYTES). */
  bytesUsed(): number;
  entryCount(): number;
}

export interface LocalOverLimitCacheOptions {
  /** LOCAL_CACHE_SIZE_IN_BYTES; > 0 (0 means "disabled": do not build a cache). */
  readonly maxBytes: number;
  readonly clock: Clock;
  /** Receives the gauges `ratelimit.localcache.*`. */
  readonly stats: StatsStore;
}

interface Entry {
  expiresAtMs: number;
  accessSeconds: number;
  bytes: number;
}

interface LocalCacheGauges {
  readonly entryCount: Gauge;
  readonly hitCount: Gauge;
  readonly missCount: Gauge;
  readonly lookupCount: Gauge;
  readonly expiredCount: Gauge;
  readonly evacuateCount: Gauge;
  readonly overwriteCount: Gauge;
  readonly averageAccessTime: Gauge;
}

/**
 * A byte-bounded map in insertion order. When full, the oldest insertions go first (counted as expired when
 * they already were, as evacuated otherwise), which is freecache's ring-buffer behaviour in spirit.
 */
export function createLocalOverLimitCache(options: LocalOverLimitCacheOptions): LocalOverLimitCache {
  if (!(options.maxBytes > 0)) throw new RangeError('local cache size must be > 0 bytes');
  const { clock, maxBytes } = options;
  const entries = new Map<string, Entry>();
  const name = (n: string): Gauge => options.stats.gauge('ratelimit.localcache.' + n);
  const gauges: LocalCacheGauges = {
    entryCount: name('entryCount'),
    hitCount: name('hitCount'),
    missCount: name('missCount'),
    lookupCount: name('lookupCount'),
    expiredCount: name('expiredCount'),
    evacuateCount: name('evacuateCount'),
    overwriteCount: name('overwriteCount'),
    averageAccessTime: name('averageAccessTime'),
  };
  let bytes = 0;
  let accessSecondsSum = 0;

  const publishSize = (): void => {
    gauges.entryCount.set(entries.size);
    // freecache reports the mean of the entries' last access times (unix seconds), not a duration.
    gauges.averageAccessTime.set(entries.size === 0 ? 0 : Math.floor(accessSecondsSum / entries.size));
  };
  const remove = (key: string, entry: Entry): void => {
    entries.delete(key);
    bytes -= entry.bytes;
    accessSecondsSum -= entry.accessSeconds;
  };
  const evictOldest = (nowMs: number): boolean => {
    const first = entries.entries().next();
    if (first.done === true) return false;
    const [key, entry] = first.value;
    remove(key, entry);
    if (entry.expiresAtMs <= nowMs) gauges.expiredCount.add(1);
    else gauges.evacuateCount.add(1);
    return true;
  };

  return {
    has(key) {
      gauges.lookupCount.add(1);
      const entry = entries.get(key);
      const nowMs = clock.nowMs();
      if (entry === undefined || entry.expiresAtMs <= nowMs) {
        if (entry !== undefined) {
          remove(key, entry);
          gauges.expiredCount.add(1);
          publishSize();
        }
        gauges.missCount.add(1);
        return false;
      }
      const seconds = Math.floor(nowMs / 1000);
      accessSecondsSum += seconds - entry.accessSeconds;
      entry.accessSeconds = seconds;
      gauges.hitCount.add(1);
      return true;
    },
    add(key, ttlSeconds) {
      const nowMs = clock.nowMs();
      const entryBytes = key.length + LOCAL_CACHE_ENTRY_OVERHEAD_BYTES;
      if (entryBytes > maxBytes) return;
      const existing = entries.get(key);
      if (existing !== undefined) {
        remove(key, existing);
        gauges.overwriteCount.add(1);
      }
      // Drop expired entries at the head cheaply, then make room by insertion age.
      for (;;) {
        const first = entries.entries().next();
        if (first.done === true || first.value[1].expiresAtMs > nowMs) break;
        evictOldest(nowMs);
      }
      while (bytes + entryBytes > maxBytes && evictOldest(nowMs));
      const seconds = Math.floor(nowMs / 1000);
      entries.set(key, { expiresAtMs: nowMs + ttlSeconds * 1000, accessSeconds: seconds, bytes: entryBytes });
      bytes += entryBytes;
      accessSecondsSum += seconds;
      publishSize();
    },
    bytesUsed: () => bytes,
    entryCount: () => entries.size,
  };
}
