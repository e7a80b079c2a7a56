// The small query interface both store drivers (PGlite, PostgreSQL) implement; repositories only see this.

/** A row as the driver returns it; repositories convert columns to their own typed records. */
export type Row = Readonly<Record<string, unknown>>;

/** Runs parameterised SQL ($1, $2 …). Values: string, number, boolean, null, Date, Uint8Array, string[]. */
export interface SqlExecutor {
  /** Runs one statement and returns its rows (empty for statements without RETURNING). Throws StoreError. */
  query(sql: string, params?: readonly unknown[]): Promise<readonly Row[]>;
}

export interface Database extends SqlExecutor {
  /** Which driver backs this store, for logs and /readyz. */
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs fn inside one transaction (BEGIN … COMMIT, ROLLBACK when fn throws). Statements on `tx` belong to the
   * transaction; the outer executor must not be used inside fn.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Releases the connection(s) and, for PGlite, the data directory lock. Safe to call twice. */
  close(): Promise<void>;
}

/** A store fault: the database is unreachable, a statement failed, or the data directory is held elsewhere. */
export class StoreError extends Error {
  constructor(
    readonly code: 'unavailable' | 'query_failed' | 'unique_violation' | 'data_dir_locked' | 'migration_failed',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreError';
  }
}

/** Maps a driver error (both drivers expose the PostgreSQL SQLSTATE as `code`) to a StoreError. */
export function toStoreError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const sqlState = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  const message = err instanceof Error ? err.message : String(err);
  if (sqlState === '23505') return new StoreError('unique_violation', message, { cause: err });
  if (typeof sqlState === 'string' && /^(08|57P)/.test(sqlState)) {
    return new StoreError('unavailable', message, { cause: err });
  }
  if (typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState)) {
    return new StoreError('query_failed', message, { cause: err });
  }
  // No SQLSTATE: a socket/connection failure (ECONNREFUSED and friends).
  return new StoreError('unavailable', message, { cause: err });
}

/** Reads a bytea column: PGlite returns Uint8Array, pg returns Buffer. */
export function bytesColumn(value: unknown): Buffer {
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw new StoreError('query_failed', `expected a bytea column, got ${typeof value}`);
}

/** Reads a timestamptz column (both drivers return Date). */
export function dateColumn(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'string') return new Date(value);
  throw new StoreError('query_failed', `expected a timestamptz column, got ${typeof value}`);
}

/** Reads a text column. */
export function textColumn(value: unknown): string {
  if (typeof value === 'string') return value;
  throw new StoreError('query_failed', `expected a text column, got ${typeof value}`);
}

/** Reads a nullable text column. */
export function nullableTextColumn(value: unknown): string | null {
  return value === null || value === undefined ? null : textColumn(value);
}

/** Reads an integer column (int4 is a number in both drivers; bigint arrives as a string from pg). */
export function intColumn(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
  if (typeof value === 'bigint') return Number(value);
  throw new StoreError('query_failed', `expected an integer column, got ${typeof value}`);
}

/** Reads a text[] column. */
export function textArrayColumn(value: unknown): string[] {
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  throw new StoreError('query_failed', 'expected a text[] column');
}
