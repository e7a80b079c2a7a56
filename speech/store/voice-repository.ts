// Stored voices: the shared catalog (seeded from code) and each workspace's personal (cloned) voices.
import {
  bytesColumn,
  dateColumn,
  intColumn,
  nullableTextColumn,
  textArrayColumn,
  textColumn,
  type Row,
  type SqlExecutor,
} from './database.js';
import { newId } from './ids.js';

export type VoiceType = 'shared' | 'personal';
export type VoiceGender = 'male' | 'female' | 'not_specified';

export interface VoiceRecord {
  readonly id: string;
  /** Insertion order; personal voices are listed by it, newest (largest) first. */
  readonly seq: number;
  readonly type: VoiceType;
  /** Owner of a personal voice; null for shared voices. */
  readonly workspaceId: string | null;
  readonly displayName: string;
  readonly gender: VoiceGender;
  /** BCP-47 locale as stored, e.g. en-US. */
  readonly locale: string;
  /** Model ids the voice may be used with. */
  readonly models: readonly string[];
  /** Engine-specific parameters (JSON); the voices module turns it into the engine's VoiceProfile. */
  readonly profile: Readonly<Record<string, unknown>>;
  readonly avatarImage: string | null;
  readonly sampleMediaType: string | null;
  readonly createdAt: Date;
}

export interface SharedVoiceSeed {
  readonly id: string;
  readonly displayName: string;
  readonly gender: VoiceGender;
  readonly locale: string;
  readonly models: readonly string[];
  readonly profile: Readonly<Record<string, unknown>>;
}

export interface NewPersonalVoice {
  readonly workspaceId: string;
  readonly displayName: string;
  readonly gender: VoiceGender;
  readonly locale: string;
  readonly models: readonly string[];
  readonly profile: Readonly<Record<string, unknown>>;
  readonly sample: Uint8Array;
  readonly sampleMediaType: string;
  readonly createdByKeyId: string;
  readonly avatarImage?: string | null;
}

/** Filters of the voice list; every given one must hold. */
export interface VoiceFilter {
  readonly type?: VoiceType;
  /** Lower-case BCP-47 range: matches the locale itself or any locale that extends it by whole subtags. */
  readonly localeRange?: string;
  readonly gender?: VoiceGender;
  readonly model?: string;
}

/** Where a page starts: after this shared voice (by name, id) or after this personal voice (by seq). */
export type VoicePosition =
  | { readonly section: 'shared'; readonly displayName: string; readonly id: string }
  | { readonly section: 'personal'; readonly seq: number };

const COLUMNS = `id, seq, type, workspace_id, display_name, gender, locale, models, profile, avatar_image,
  sample_media_type, created_at`;

function toVoice(row: Row): VoiceRecord {
  return {
    id: textColumn(row.id),
    seq: intColumn(row.seq),
    type: textColumn(row.type) as VoiceType,
    workspaceId: nullableTextColumn(row.workspace_id),
    displayName: textColumn(row.display_name),
    gender: textColumn(row.gender) as VoiceGender,
    locale: textColumn(row.locale),
    models: textArrayColumn(row.models),
    profile: (row.profile ?? {}) as Readonly<Record<string, unknown>>,
    avatarImage: nullableTextColumn(row.avatar_image),
    sampleMediaType: nullableTextColumn(row.sample_media_type),
    createdAt: dateColumn(row.created_at),
  };
}

function filterSql(filter: VoiceFilter, params: unknown[]): string {
  const parts: string[] = [];
  if (filter.localeRange !== undefined) {
    params.push(filter.localeRange);
    // The range is validated at the edge (letters, digits, hyphens), so it carries no LIKE wildcards.
    parts.push(`(lower(locale) = $${params.length} OR lower(locale) LIKE $${params.length} || '-%')`);
  }
  if (filter.gender !== undefined) {
    params.push(filter.gender);
    parts.push(`gender = $${params.length}`);
  }
  if (filter.model !== undefined) {
    params.push(filter.model);
    parts.push(`$${params.length} = ANY(models)`);
  }
  return parts.map((p) => ` AND ${p}`).join('');
}

export interface VoiceRepository {
  /** Makes the shared catalog equal to `voices` (insert, update, delete of shared rows); idempotent. */
  syncSharedVoices(voices: readonly SharedVoiceSeed[]): Promise<void>;
  insertPersonal(voice: NewPersonalVoice): Promise<VoiceRecord>;
  /** A shared voice, or a personal voice of `workspaceId`; null otherwise (another workspace's voice included). */
  findVisible(id: string, workspaceId: string): Promise<VoiceRecord | null>;
  /**
   * Up to `limit` voices visible to `workspaceId` matching `filter`, in list order (shared by display name then
   * id, bytewise; then personal newest first), starting after `after`. Pass limit null for all.
   */
  listVisible(
    workspaceId: string,
    filter: VoiceFilter,
    after: VoicePosition | null,
    limit: number | null,
  ): Promise<VoiceRecord[]>;
  /** Deletes a personal voice of `workspaceId`; false when there is none with that id. */
  deletePersonal(id: string, workspaceId: string): Promise<boolean>;
  /** The stored sample of a personal voice of `workspaceId`, or null. */
  findSample(id: string, workspaceId: string): Promise<{ readonly bytes: Buffer; readonly mediaType: string } | null>;
}

export function createVoiceRepository(db: SqlExecutor): VoiceRepository {
  async function listShared(
    filter: VoiceFilter,
    after: VoicePosition | null,
    limit: number | null,
  ): Promise<VoiceRecord[]> {
    const params: unknown[] = [];
    let sql = `SELECT ${COLUMNS} FROM voices WHERE type = 'shared'${filterSql(filter, params)}`;
    if (after !== null && after.section === 'shared') {
      params.push(after.displayName, after.id);
      const n = params.length;
      sql += ` AND (display_name COLLATE "C" > $${n - 1} OR (display_name = $${n - 1} AND id COLLATE "C" > $${n}))`;
    }
    sql += ' ORDER BY display_name COLLATE "C", id COLLATE "C"';
    if (limit !== null) sql += ` LIMIT ${limit}`;
    return (await db.query(sql, params)).map(toVoice);
  }

  async function listPersonal(
    workspaceId: string,
    filter: VoiceFilter,
    after: VoicePosition | null,
    limit: number | null,
  ): Promise<VoiceRecord[]> {
    const params: unknown[] = [workspaceId];
    let sql = `SELECT ${COLUMNS} FROM voices WHERE type = 'personal' AND workspace_id = $1${filterSql(filter, params)}`;
    if (after !== null && after.section === 'personal') {
      params.push(after.seq);
      sql += ` AND seq < $${params.length}`;
    }
    sql += ' ORDER BY seq DESC';
    if (limit !== null) sql += ` LIMIT ${limit}`;
    return (await db.query(sql, params)).map(toVoice);
  }

  return {
    async syncSharedVoices(voices) {
      for (const v of voices) {
        await db.query(
          `INSERT INTO voices (id, type, workspace_id, display_name, gender, locale, models, profile)
           VALUES ($1, 'shared', NULL, $2, $3, $4, $5, $6)
           ON CONFLICT (id) DO UPDATE SET display_name = EXCLUDED.display_name, gender = EXCLUDED.gender,
             locale = EXCLUDED.locale, models = EXCLUDED.models, profile = EXCLUDED.profile
           WHERE voices.type = 'shared'`,
          [v.id, v.displayName, v.gender, v.locale, [...v.models], JSON.stringify(v.profile)],
        );
      }
      await db.query(`DELETE FROM voices WHERE type = 'shared' AND NOT (id = ANY($1))`, [voices.map((v) => v.id)]);
    },
    async insertPersonal(v) {
      const rows = await db.query(
        `INSERT INTO voices (id, type, workspace_id, display_name, gender, locale, models, profile, avatar_image,
           sample, sample_media_type, created_by_key_id)
         VALUES ($1, 'personal', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${COLUMNS}`,
        [
          newId('voice'),
          v.workspaceId,
          v.displayName,
          v.gender,
          v.locale,
          [...v.models],
          JSON.stringify(v.profile),
          v.avatarImage ?? null,
          v.sample,
          v.sampleMediaType,
          v.createdByKeyId,
        ],
      );
      return toVoice(rows[0] as Row);
    },
    async findVisible(id, workspaceId) {
      const rows = await db.query(
        `SELECT ${COLUMNS} FROM voices WHERE id = $1 AND (type = 'shared' OR workspace_id = $2)`,
        [id, workspaceId],
      );
      return rows.length === 0 ? null : toVoice(rows[0] as Row);
    },
    async listVisible(workspaceId, filter, after, limit) {
      const out: VoiceRecord[] = [];
      const inShared = after === null || after.section === 'shared';
      if (inShared && filter.type !== 'personal') {
        out.push(...(await listShared(filter, after, limit)));
      }
      if (limit !== null && out.length >= limit) return out;
      if (filter.type !== 'shared') {
        const rest = limit === null ? null : limit - out.length;
        out.push(...(await listPersonal(workspaceId, filter, inShared ? null : after, rest)));
      }
      return out;
    },
    async deletePersonal(id, workspaceId) {
      const rows = await db.query(
        `DELETE FROM voices WHERE id = $1 AND type = 'personal' AND workspace_id = $2 RETURNING id`,
        [id, workspaceId],
      );
      return rows.length > 0;
    },
    async findSample(id, workspaceId) {
      const rows = await db.query(
        `SELECT sample, sample_media_type FROM voices
         WHERE id = $1 AND type = 'personal' AND workspace_id = $2 AND sample IS NOT NULL`,
        [id, workspaceId],
      );
      if (rows.length === 0) return null;
      const row = rows[0] as Row;
      return { bytes: bytesColumn(row.sample), mediaType: textColumn(row.sample_media_type) };
    },
  };
}
