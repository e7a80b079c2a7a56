// The typed startup error for a bad environment value; main prints its one-line message and exits 1.

export type SettingsErrorCode = 'invalid_value' | 'alias_conflict' | 'incompatible' | 'unsupported';

export class SettingsError extends Error {
  /**
   * @param code what kind of problem it is
   * @param variable the environment variable(s) at fault, e.g. `PORT` or `KV_URL/REDIS_URL`
   * @param message one line naming the variable, the bad value and the expected form
   */
  constructor(
    readonly code: SettingsErrorCode,
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'SettingsError';
  }
}

/** Quotes a value for an error message the way Go's %q would, so invisible characters show. */
export function quoteValue(value: string): string {
  return JSON.stringify(value);
}

export function invalidValue(variable: string, value: string, expected: string): SettingsError {
  return new SettingsError(
    'invalid_value',
    variable,
    `invalid value ${quoteValue(value)} for ${variable}: expected ${expected}`,
  );
}
