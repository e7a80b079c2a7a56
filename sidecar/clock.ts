// The time source, passed in so that tests can pin "now" (upstream's utils.TimeSource).

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

/** A clock that only moves when told to; for tests. */
export class ManualClock implements Clock {
  constructor(private currentMs = 0) {}
  nowMs(): number {
    return this.currentMs;
  }
  setSeconds(unixSeconds: number): void {
    this.currentMs = unixSeconds * 1000;
  }
  advanceMs(ms: number): void {
    this.currentMs += ms;
  }
}
