// Chooses the store driver from the settings (DATABASE_URL → PostgreSQL, else PGlite in DATA_DIR) and migrates it.
import type { Database } from './database.js';
import { openPgliteDatabase } from './database-pglite.js';
import { openPostgresDatabase } from './database-postgres.js';
import { runMigrations } from './migration.js';

export interface StoreLocation {
  /** PostgreSQL URL, or null for the embedded PGlite store. */
  readonly databaseUrl: string | null;
  /** PGlite data directory (absolute); used only when databaseUrl is null. */
  readonly dataDir: string;
}

/**
 * Opens the store and applies pending migrations. `program` names the caller in the PGlite lock file so that
 * a second process is told who holds the directory. Throws StoreError.
 */
export async function openDatabase(location: StoreLocation, program: string): Promise<Database> {
  const db =
    location.databaseUrl === null
      ? await openPgliteDatabase(location.dataDir, program)
      : await openPostgresDatabase(location.databaseUrl);
  try {
    await runMigrations(db);
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return db;
}
