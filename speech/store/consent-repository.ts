// Consent challenges (single use, bound to a workspace, short-lived) and the consent records kept after cloning.
import { dateColumn, nullableTextColumn, textColumn, type Row, type SqlExecutor } from './database.js';
import { newId } from './ids.js';

export interface ConsentChallengeRecord {
  readonly id: string;
  readonly workspaceId: string;
  readonly fullName: string;
  readonly phrase: string;
  readonly createdByKeyId: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly consumedAt: Date | null;
}

export interface NewConsentChallenge {
  readonly workspaceId: string;
  readonly fullName: string;
  readonly phrase: string;
  readonly createdByKeyId: string;
  readonly nowMs: number;
  /** Lifetime (10 minutes in the spec). */
  readonly ttlMs: number;
}

/** The outcome of using a challenge, in the order the spec checks them (A.6). */
export type ConsumeResult =
  | { readonly kind: 'consumed'; readonly challenge: ConsentChallengeRecord }
  /** Unknown id, or a challenge of another workspace (indistinguishable on purpose). */
  | { readonly kind: 'not_found' }
  | { readonly kind: 'expired' }
  | { readonly kind: 'used' };

export interface NewConsentRecord {
  readonly workspaceId: string;
  readonly challengeId: string;
  /** The voice created, or null when verification failed (the attempt is kept too). */
  readonly voiceId: string | null;
  readonly fullName: string;
  readonly phrase: string;
  readonly recording: Uint8Array;
  readonly recordingMediaType: string;
  readonly phraseScore: number | null;
  readonly speakerScore: number | null;
  /** `verified` or the failure code (e.g. consent_phrase_mismatch). */
  readonly outcome: string;
  readonly createdByKeyId: string;
}

function toChallenge(row: Row): ConsentChallengeRecord {
  return {
    id: textColumn(row.id),
    workspaceId: textColumn(row.workspace_id),
    fullName: textColumn(row.full_name),
    phrase: textColumn(row.phrase),
    createdByKeyId: textColumn(row.created_by_key_id),
    createdAt: dateColumn(row.created_at),
    expiresAt: dateColumn(row.expires_at),
    consumedAt: row.consumed_at === null ? null : dateColumn(row.consumed_at),
  };
}

export interface ConsentRepository {
  createChallenge(challenge: NewConsentChallenge): Promise<ConsentChallengeRecord>;
  /** Marks the challenge used if it is the workspace's, unexpired and unused; atomic, so it is used at most once. */
  consumeChallenge(id: string, workspaceId: string, nowMs: number): Promise<ConsumeResult>;
  /** Stores a consent record; returns its id. Records outlive the voice they allowed. */
  insertRecord(record: NewConsentRecord): Promise<string>;
  /** The voice a record allowed, by challenge id, for audits; null when there is no record. */
  findRecordVoice(challengeId: string): Promise<{ readonly recordId: string; readonly voiceId: string | null } | null>;
}

export function createConsentRepository(db: SqlExecutor): ConsentRepository {
  return {
    async createChallenge(c) {
      const rows = await db.query(
        `INSERT INTO consent_challenges (id, workspace_id, full_name, phrase, created_by_key_id, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
        [
          newId('cc'),
          c.workspaceId,
          c.fullName,
          c.phrase,
          c.createdByKeyId,
          new Date(c.nowMs),
          new Date(c.nowMs + c.ttlMs),
        ],
      );
      return toChallenge(rows[0] as Row);
    },
    async consumeChallenge(id, workspaceId, nowMs) {
      const now = new Date(nowMs);
      const rows = await db.query(
        `UPDATE consent_challenges SET consumed_at = $3
         WHERE id = $1 AND workspace_id = $2 AND consumed_at IS NULL AND expires_at > $3 RETURNING *`,
        [id, workspaceId, now],
      );
      if (rows.length > 0) return { kind: 'consumed', challenge: toChallenge(rows[0] as Row) };
      const existing = await db.query('SELECT * FROM consent_challenges WHERE id = $1 AND workspace_id = $2', [
        id,
        workspaceId,
      ]);
      const row = existing[0] as Row | undefined;
      if (row === undefined) return { kind: 'not_found' };
      if (dateColumn(row.expires_at).getTime() <= nowMs) return { kind: 'expired' };
      return { kind: 'used' };
    },
    async insertRecord(r) {
      const id = newId('consent');
      await db.query(
        `INSERT INTO consent_records (id, workspace_id, challenge_id, voice_id, full_name, phrase, recording,
           recording_media_type, phrase_score, speaker_score, outcome, created_by_key_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [
          id,
          r.workspaceId,
          r.challengeId,
          r.voiceId,
          r.fullName,
          r.phrase,
          r.recording,
          r.recordingMediaType,
          r.phraseScore,
          r.speakerScore,
          r.outcome,
          r.createdByKeyId,
        ],
      );
      return id;
    },
    async findRecordVoice(challengeId) {
      const rows = await db.query('SELECT id, voice_id FROM consent_records WHERE challenge_id = $1', [challengeId]);
      const row = rows[0] as Row | undefined;
      return row === undefined ? null : { recordId: textColumn(row.id), voiceId: nullableTextColumn(row.voice_id) };
    },
  };
}
