// Exponential backoff with jitter for the startup connect loop (upstream uses cenkalti/backoff's defaults).

export interface BackoffOptions {
  /** First delay in ms (REDIS_STARTUP_INITIAL_INTERVAL, default 1 s). */
  readonly initialIntervalMs: number;
  /** Largest delay in ms before jitter (REDIS_STARTUP_MAX_INTERVAL, default 30 s). */
  readonly maxIntervalMs: number;
  /** Give up once this much time has passed; 0 retries forever (REDIS_STARTUP_MAX_ELAPSED_TIME). */
  readonly maxElapsedMs: number;
  /** Growth per attempt; 2. */
  readonly multiplier?: number;
  /** Each delay is interval × (1 ± factor × rand); 0.5 like cenkalti/backoff. */
  readonly randomizationFactor?: number;
}

/** Returns a function giving the next delay in ms: attempt n waits about initial × multiplier^n, capped. */
export function exponentialBackoff(options: BackoffOptions, random: () => number = Math.random): () => number {
  const multiplier = options.multiplier ?? 2;
  const factor = options.randomizationFactor ?? 0.5;
  let interval = Math.max(1, options.initialIntervalMs);
  return () => {
    const delta = factor * interval;
    const delay = interval - delta + random() * 2 * delta;
    interval = Math.min(interval * multiplier, Math.max(options.maxIntervalMs, 1));
    return Math.round(delay);
  };
}
