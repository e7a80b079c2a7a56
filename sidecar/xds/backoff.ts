// Reconnect delays with upstream's semantics (jpillora/backoff as ratelimit configures it): min·factor^n, jittered, clamped.

export interface BackoffSettings {
  /** XDS_CLIENT_BACKOFF_INITIAL_INTERVAL (upstream Min). */
  readonly backoffInitialIntervalMs: number;
  /** XDS_CLIENT_BACKOFF_MAX_INTERVAL (upstream Max). */
  readonly backoffMaxIntervalMs: number;
  /** XDS_CLIENT_BACKOFF_RANDOM_FACTOR: upstream passes it as the multiplier, so 0.5 keeps every delay at Min. */
  readonly backoffRandomFactor: number;
  readonly backoffJitter: boolean;
}

export interface Backoff {
  /** The delay before the next attempt, in ms; each call counts one attempt. */
  nextDelayMs(): number;
  /** Back to the first delay (after a stream delivered a response). */
  reset(): void;
}

export function createBackoff(settings: BackoffSettings, random: () => number = Math.random): Backoff {
  const min = Math.max(0, settings.backoffInitialIntervalMs);
  const max = Math.max(min, settings.backoffMaxIntervalMs);
  const factor = settings.backoffRandomFactor > 0 ? settings.backoffRandomFactor : 2;
  let attempt = 0;
  return {
    nextDelayMs() {
      const raw = min * Math.pow(factor, attempt);
      attempt += 1;
      let delay = Number.isFinite(raw) ? raw : max;
      if (settings.backoffJitter) delay = random() * (delay - min) + min;
      return Math.round(Math.min(max, Math.max(min, delay)));
    },
    reset() {
      attempt = 0;
    },
  };
}
