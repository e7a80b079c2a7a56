// The embedded store driver: PGlite (PostgreSQL in WebAssembly) in a local data directory, one process at a time.
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { acquireDataDirLock } from './data-dir-lock.js';
import { toStoreError, type Database, type Row, type SqlExecutor } from './database.js';

function executor(target: PGlite | Transaction): SqlExecutor {
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

/**
 * Opens (creating if needed) the PGlite store under dataDir/pglite after taking dataDir/store.lock for `program`.
 * Throws StoreError('data_dir_locked') when another live process holds the directory.
 */
export async function openPgliteDatabase(dataDir: string, program: string): Promise<Database> {
  const lock = acquireDataDirLock(dataDir, program);
  let db: PGlite;
  try {
    db = await PGlite.create(`${dataDir}/pglite`);
  } catch (err) {
    lock.release();
    throw toStoreError(err);
  }
  const outer = executor(db);
  let closed = false;
  return {
    kind: 'pglite',
    query: outer.query,
    async transaction(fn) {
      // Driver errors are already StoreErrors (executor); the caller's own errors pass through unchanged.
      return db.transaction((tx) => fn(executor(tx)));
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await db.close();
      } finally {
        lock.release();
      }
    },
  };
}
