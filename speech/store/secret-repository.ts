// Named server secrets kept in the store so that every gateway replica (and a restart) uses the same ones.
import { randomBytes } from 'node:crypto';
import { bytesColumn, type SqlExecutor } from './database.js';

/**
 * Returns the secret called `name`, creating it with `sizeBytes` random bytes on first use. Concurrent callers
 * all get the same value (the first insert wins).
 */
export async function loadOrCreateSecret(db: SqlExecutor, name: string, sizeBytes = 32): Promise<Buffer> {
  await db.query('INSERT INTO server_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    name,
    randomBytes(sizeBytes),
  ]);
  const rows = await db.query('SELECT value FROM server_secrets WHERE name = $1', [name]);
  return bytesColumn(rows[0]?.value);
}
