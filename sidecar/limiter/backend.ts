// The counter store interface: only counter I/O; every decision is made by the shared fixed-window limiter.

/** One counter operation of a request. */
export interface CounterOp {
  /** Full cache key (CACHE_KEY_PREFIX included), never ''. */
  readonly key: string;
  /** Amount to add; 0 only refreshes the TTL and reads the value (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT). */
  readonly hits: number;
  /** TTL in seconds set on every increment (window length + jitter); > 0. */
  readonly ttlSeconds: number;
  /** SECOND-unit key: goes to the per-second store when one is configured (REDIS_PERSECOND). */
  readonly perSecond: boolean;
}

export interface CounterBackend {
  /**
   * Adds `hits` to each key and (re)sets its TTL, in one round trip per underlying store. Resolves with the
   * counts after the increment, in the order of `ops`.
   * @throws BackendError when the store fails or does not answer within its timeout.
   */
  increment(ops: readonly CounterOp[]): Promise<number[]>;
  /**
   * Current counts (0 for a missing key), in the order of `ops`; hits and ttlSeconds are ignored.
   * @throws BackendError as increment.
   */
  get(ops: readonly CounterOp[]): Promise<number[]>;
  /** Releases connections and timers. Idempotent; later calls to increment/get reject with BackendError. */
  close(): Promise<void>;
}
