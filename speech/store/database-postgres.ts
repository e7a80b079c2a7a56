// The production store driver: a PostgreSQL server reached through a pg connection pool.
import pg from 'pg';
import { toStoreError, type Database, type Row, type SqlExecutor } from './database.js';

export interface PostgresOptions {
  /** Maximum pooled connections (default 10). */
  readonly maxConnections?: number;
  /** How long to wait for a connection before failing (default 5000 ms): a down database answers fast. */
  readonly connectTimeoutMs?: number;
}

function executor(target: pg.Pool | pg.PoolClient): SqlExecutor {
  return {
    async query(sql, params = []) {
      try {
        const result = await target.query<Row>(sql, [...params]);
        return result.rows;
      } catch (err) {
        throw toStoreError(err);
      }
    },
  };
}

/** Connects a pool to `url` and checks it with one round trip; throws StoreError('unavailable') if unreachable. */
export async function openPostgresDatabase(url: string, options: PostgresOptions = {}): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  const outer = executor(pool);
  try {
    await outer.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  let closed = false;
  return {
    kind: 'postgres',
    query: outer.query,
    async transaction(fn) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw toStoreError(err);
      }
      const tx = executor(client);
      try {
        await tx.query('BEGIN');
        const result = await fn(tx);
        await tx.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
