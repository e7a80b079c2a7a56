// Stored API keys: only a lookup prefix and the SHA-256 of the key are kept, never the key itself.
import { dateColumn, nullableTextColumn, textArrayColumn, textColumn, type Row, type SqlExecutor } from './database.js';
import { newId } from './ids.js';
import type { MemberRole } from './workspace-repository.js';

export interface ApiKeyRecord {
  readonly id: string;
  readonly workspaceId: string;
  /** The member the key acts for, or null for a service-account key. */
  readonly memberId: string | null;
  /** The member's role; null for a service-account key. */
  readonly memberRole: MemberRole | null;
  /** Service-account name, or null for a member key. */
  readonly serviceAccount: string | null;
  readonly prefix: string;
  /** Hex SHA-256 of the full key string. */
  readonly secretSha256: string;
  readonly scopes: readonly string[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

export interface NewApiKey {
  readonly workspaceId: string;
  readonly memberId: string | null;
  readonly serviceAccount: string | null;
  readonly prefix: string;
  readonly secretSha256: string;
  readonly scopes: readonly string[];
}

const SELECT = `SELECT k.*, m.role AS member_role FROM api_keys k LEFT JOIN members m ON m.id = k.member_id`;

function toKey(row: Row): ApiKeyRecord {
  return {
    id: textColumn(row.id),
    workspaceId: textColumn(row.workspace_id),
    memberId: nullableTextColumn(row.member_id),
    memberRole: nullableTextColumn(row.member_role) as MemberRole | null,
    serviceAccount: nullableTextColumn(row.service_account),
    prefix: textColumn(row.prefix),
    secretSha256: textColumn(row.secret_sha256),
    scopes: textArrayColumn(row.scopes),
    createdAt: dateColumn(row.created_at),
    revokedAt: row.revoked_at === null ? null : dateColumn(row.revoked_at),
  };
}

export interface ApiKeyRepository {
  insert(key: NewApiKey): Promise<ApiKeyRecord>;
  /** The key with that lookup prefix, revoked or not; null when none. */
  findByPrefix(prefix: string): Promise<ApiKeyRecord | null>;
  /** Keys of a workspace, oldest first, revoked ones included. */
  listByWorkspace(workspaceId: string): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked; false when there is no such key or it was already revoked. */
  revoke(id: string): Promise<boolean>;
  /** Number of keys in the whole store (bootstrap decides on it). */
  count(): Promise<number>;
}

export function createApiKeyRepository(db: SqlExecutor): ApiKeyRepository {
  return {
    async insert(key) {
      const id = newId('key');
      await db.query(
        `INSERT INTO api_keys (id, workspace_id, member_id, service_account, prefix, secret_sha256, scopes)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [id, key.workspaceId, key.memberId, key.serviceAccount, key.prefix, key.secretSha256, [...key.scopes]],
      );
      const rows = await db.query(`${SELECT} WHERE k.id = $1`, [id]);
      return toKey(rows[0] as Row);
    },
    async findByPrefix(prefix) {
      const rows = await db.query(`${SELECT} WHERE k.prefix = $1`, [prefix]);
      return rows.length === 0 ? null : toKey(rows[0] as Row);
    },
    async listByWorkspace(workspaceId) {
      const rows = await db.query(`${SELECT} WHERE k.workspace_id = $1 ORDER BY k.created_at, k.id`, [workspaceId]);
      return rows.map(toKey);
    },
    async revoke(id) {
      const rows = await db.query(
        'UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id',
        [id],
      );
      return rows.length > 0;
    },
    async count() {
      const rows = await db.query('SELECT count(*)::int AS n FROM api_keys');
      return Number(rows[0]?.n ?? 0);
    },
  };
}
