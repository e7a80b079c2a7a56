// Applies the store's SQL migrations in order, each in its own transaction, recorded in schema_migrations.
import { StoreError, intColumn, type Database } from './database.js';
import { allMigrations } from './migrations/index.js';

export interface Migration {
  /** Strictly increasing, starting at 1; never reused or renumbered once released. */
  readonly version: number;
  readonly name: string;
  /** One SQL statement per entry, run in order; identical for PGlite and PostgreSQL. */
  readonly statements: readonly string[];
}

/**
 * Brings the schema up to date and returns the versions applied now (empty when already current).
 * Concurrent runners (several gateway replicas) serialise on an advisory lock; a failed migration rolls back
 * completely and throws StoreError('migration_failed').
 */
export async function runMigrations(db: Database, migrations: readonly Migration[] = allMigrations): Promise<number[]> {
  await db.query(
    `CREATE TABLE IF NOT EXISTS schema_migrations (
       version integer PRIMARY KEY,
       name text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT now()
     )`,
  );
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  const applied: number[] = [];
  for (const migration of sorted) {
    const ran = await db.transaction(async (tx) => {
      // 0x63686f72 = "chor": one lock id for all migration runners.
      await tx.query('SELECT pg_advisory_xact_lock(1667788658)');
      const done = await tx.query('SELECT version FROM schema_migrations WHERE version = $1', [migration.version]);
      if (done.length > 0) return false;
      for (const statement of migration.statements) {
        try {
          await tx.query(statement);
        } catch (err) {
          throw new StoreError(
            'migration_failed',
            `migration ${migration.version} (${migration.name}) failed: ${(err as Error).message}`,
            { cause: err },
          );
        }
      }
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  return applied;
}

/** The highest applied version (0 for an empty store). */
export async function currentSchemaVersion(db: Database): Promise<number> {
  const rows = await db.query('SELECT coalesce(max(version), 0) AS v FROM schema_migrations');
  return intColumn(rows[0]?.v ?? 0);
}
