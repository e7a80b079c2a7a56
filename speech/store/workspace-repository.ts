// Workspaces and their members: the tenants that own keys, personal voices and consent records.
import { dateColumn, textColumn, type Row, type SqlExecutor } from './database.js';
import { newId } from './ids.js';

export type MemberRole = 'owner' | 'admin' | 'member' | 'viewer';
export const MEMBER_ROLES: readonly MemberRole[] = ['owner', 'admin', 'member', 'viewer'];

export interface WorkspaceRecord {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
}

export interface MemberRecord {
  readonly id: string;
  readonly workspaceId: string;
  readonly email: string;
  readonly role: MemberRole;
  readonly createdAt: Date;
}

function toWorkspace(row: Row): WorkspaceRecord {
  return { id: textColumn(row.id), name: textColumn(row.name), createdAt: dateColumn(row.created_at) };
}

function toMember(row: Row): MemberRecord {
  return {
    id: textColumn(row.id),
    workspaceId: textColumn(row.workspace_id),
    email: textColumn(row.email),
    role: textColumn(row.role) as MemberRole,
    createdAt: dateColumn(row.created_at),
  };
}

export interface WorkspaceRepository {
  /** Creates a workspace; throws StoreError('unique_violation') when the name is taken. */
  create(name: string): Promise<WorkspaceRecord>;
  /** All workspaces, oldest first. */
  list(): Promise<WorkspaceRecord[]>;
  get(id: string): Promise<WorkspaceRecord | null>;
  /** Adds a member; throws StoreError('unique_violation') when the e-mail is already a member. */
  addMember(workspaceId: string, email: string, role: MemberRole): Promise<MemberRecord>;
  getMember(id: string): Promise<MemberRecord | null>;
}

export function createWorkspaceRepository(db: SqlExecutor): WorkspaceRepository {
  return {
    async create(name) {
      const rows = await db.query('INSERT INTO workspaces (id, name) VALUES ($1, $2) RETURNING *', [newId('ws'), name]);
      return toWorkspace(rows[0] as Row);
    },
    async list() {
      const rows = await db.query('SELECT * FROM workspaces ORDER BY created_at, id');
      return rows.map(toWorkspace);
    },
    async get(id) {
      const rows = await db.query('SELECT * FROM workspaces WHERE id = $1', [id]);
      return rows.length === 0 ? null : toWorkspace(rows[0] as Row);
    },
    async addMember(workspaceId, email, role) {
      const rows = await db.query(
        'INSERT INTO members (id, workspace_id, email, role) VALUES ($1, $2, $3, $4) RETURNING *',
        [newId('mem'), workspaceId, email, role],
      );
      return toMember(rows[0] as Row);
    },
    async getMember(id) {
      const rows = await db.query('SELECT * FROM members WHERE id = $1', [id]);
      return rows.length === 0 ? null : toMember(rows[0] as Row);
    },
  };
}
