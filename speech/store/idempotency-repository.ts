// Idempotency records (spec A.5): the store decides which request runs, so the rule holds across replicas.
import { bytesColumn, intColumn, textColumn, type Row, type SqlExecutor } from './database.js';

/** One idempotency scope: workspace + route + the client's key. */
export interface IdempotencyScope {
  readonly workspaceId: string;
  /** e.g. `POST /v1/voices`. */
  readonly route: string;
  /** The client's key, at most 255 characters (checked at the edge). */
  readonly key: string;
}

export type IdempotencyClaim =
  /** This request owns the key: run the operation, then `complete` (or `release` on a fault). */
  | { readonly kind: 'claimed' }
  /** The first request finished: send its response again with `Idempotent-Replayed: true`. */
  | { readonly kind: 'replay'; readonly statusCode: number; readonly body: Buffer; readonly mediaType: string }
  /** 409 idempotency_conflict: another body under the same key, or the first request is still running. */
  | { readonly kind: 'conflict'; readonly reason: 'different_request' | 'in_flight' };

export interface IdempotencyTiming {
  readonly nowMs: number;
  /** How long a finished response is replayed (24 h in the spec). */
  readonly replayWindowMs: number;
  /** After this long an unfinished claim (a crashed replica) may be taken over. */
  readonly inFlightLeaseMs: number;
}

export interface IdempotencyRepository {
  /** Claims the scope for a request whose canonical hash is `requestSha256`. Atomic under concurrency. */
  claim(scope: IdempotencyScope, requestSha256: string, timing: IdempotencyTiming): Promise<IdempotencyClaim>;
  /** Stores the first response; it is replayed until the replay window ends. */
  complete(scope: IdempotencyScope, statusCode: number, body: Uint8Array, mediaType: string): Promise<void>;
  /** Drops an unfinished claim so that the client may retry (the operation failed without a response to keep). */
  release(scope: IdempotencyScope): Promise<void>;
  /** Deletes records whose replay window has ended; returns how many. */
  purgeExpired(nowMs: number): Promise<number>;
}

export function createIdempotencyRepository(db: SqlExecutor): IdempotencyRepository {
  const key = (s: IdempotencyScope): unknown[] => [s.workspaceId, s.route, s.key];
  return {
    async claim(scope, requestSha256, timing) {
      const now = new Date(timing.nowMs);
      // Insert, or take over a record whose window ended or whose in-flight owner is presumed dead.
      const claimed = await db.query(
        `INSERT INTO idempotency_records
           (workspace_id, route, idempotency_key, request_sha256, state, created_at, expires_at)
         VALUES ($1, $2, $3, $4, 'in_flight', $5, $6)
         ON CONFLICT (workspace_id, route, idempotency_key) DO UPDATE SET
           request_sha256 = EXCLUDED.request_sha256, state = 'in_flight', status_code = NULL,
           response_body = NULL, response_media_type = NULL, created_at = EXCLUDED.created_at,
           expires_at = EXCLUDED.expires_at
         WHERE idempotency_records.expires_at <= $5
            OR (idempotency_records.state = 'in_flight' AND idempotency_records.created_at <= $7)
         RETURNING 1 AS claimed`,
        [
          ...key(scope),
          requestSha256,
          now,
          new Date(timing.nowMs + timing.replayWindowMs),
          new Date(timing.nowMs - timing.inFlightLeaseMs),
        ],
      );
      if (claimed.length > 0) return { kind: 'claimed' };
      const rows = await db.query(
        `SELECT request_sha256, state, status_code, response_body, response_media_type FROM idempotency_records
         WHERE workspace_id = $1 AND route = $2 AND idempotency_key = $3`,
        key(scope),
      );
      const row = rows[0] as Row | undefined;
      // Deleted between the two statements (purge): the client may simply retry.
      if (row === undefined) return { kind: 'conflict', reason: 'in_flight' };
      if (textColumn(row.request_sha256) !== requestSha256) return { kind: 'conflict', reason: 'different_request' };
      if (textColumn(row.state) === 'in_flight') return { kind: 'conflict', reason: 'in_flight' };
      return {
        kind: 'replay',
        statusCode: intColumn(row.status_code),
        body: bytesColumn(row.response_body),
        mediaType: textColumn(row.response_media_type),
      };
    },
    async complete(scope, statusCode, body, mediaType) {
      await db.query(
        `UPDATE idempotency_records SET state = 'done', status_code = $4, response_body = $5, response_media_type = $6
         WHERE workspace_id = $1 AND route = $2 AND idempotency_key = $3`,
        [...key(scope), statusCode, body, mediaType],
      );
    },
    async release(scope) {
      await db.query(
        `DELETE FROM idempotency_records
         WHERE workspace_id = $1 AND route = $2 AND idempotency_key = $3 AND state = 'in_flight'`,
        key(scope),
      );
    },
    async purgeExpired(nowMs) {
      const rows = await db.query('DELETE FROM idempotency_records WHERE expires_at <= $1 RETURNING 1 AS gone', [
        new Date(nowMs),
      ]);
      return rows.length;
    },
  };
}
