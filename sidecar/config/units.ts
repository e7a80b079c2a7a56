// Rate limit units: names, window lengths, and the numeric enum values of the wire protos.

export type RateLimitUnitName = 'SECOND' | 'MINUTE' | 'HOUR' | 'DAY' | 'WEEK' | 'MONTH' | 'YEAR';

/**
 * Window length in seconds per unit (upstream `UnitToDivider`). MONTH and YEAR are fixed 30/365-day blocks and
 * windows are aligned to the Unix epoch, so WEEK windows start on Thursday 00:00 UTC.
 */
export const UNIT_DIVIDER_SECONDS: Readonly<Record<RateLimitUnitName, number>> = {
  SECOND: 1,
  MINUTE: 60,
  HOUR: 3600,
  DAY: 86400,
  WEEK: 604800,
  MONTH: 2592000,
  YEAR: 31536000,
};

/** Enum numbers shared by envoy.type.v3.RateLimitUnit, RateLimitResponse.RateLimit.Unit and the xDS config proto. */
export const UNIT_BY_NUMBER: ReadonlyMap<number, RateLimitUnitName> = new Map([
  [1, 'SECOND'],
  [2, 'MINUTE'],
  [3, 'HOUR'],
  [4, 'DAY'],
  [5, 'MONTH'],
  [6, 'YEAR'],
  [7, 'WEEK'],
]);

export const UNIT_NUMBER: Readonly<Record<RateLimitUnitName, number>> = {
  SECOND: 1,
  MINUTE: 2,
  HOUR: 3,
  DAY: 4,
  MONTH: 5,
  YEAR: 6,
  WEEK: 7,
};
