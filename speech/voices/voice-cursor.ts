// Opaque voice-list cursors: the last position of a page, HMAC-signed and bound to the workspace and filters.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { VoiceFilter, VoicePosition } from '../store/index.js';

/** A cursor that was tampered with, made for other filters, or is not ours. The API answers 400. */
export class CursorError extends Error {
  readonly code = 'invalid_cursor' as const;
  constructor(message: string) {
    super(message);
    this.name = 'CursorError';
  }
}

interface CursorPayload {
  readonly v: 1;
  /** Position: ['s', displayName, id] or ['p', seq]. */
  readonly p: readonly [string, string, string] | readonly [string, number];
  /** Scope the cursor was made for: workspace and filters. */
  readonly b: string;
}

function binding(workspaceId: string, filter: VoiceFilter): string {
  return JSON.stringify([
    workspaceId,
    filter.type ?? '',
    filter.localeRange ?? '',
    filter.gender ?? '',
    filter.model ?? '',
  ]);
}

function sign(key: Buffer, body: string): Buffer {
  return createHmac('sha256', key).update(body).digest().subarray(0, 16);
}

export interface VoiceCursorCodec {
  encode(position: VoicePosition, workspaceId: string, filter: VoiceFilter): string;
  /** The position a cursor names; throws CursorError unless it was made by `encode` for the same scope. */
  decode(cursor: string, workspaceId: string, filter: VoiceFilter): VoicePosition;
}

/** `key` is a server secret shared by all replicas (the store keeps it), so cursors survive restarts. */
export function createVoiceCursorCodec(key: Buffer): VoiceCursorCodec {
  return {
    encode(position, workspaceId, filter) {
      const payload: CursorPayload = {
        v: 1,
        p: position.section === 'shared' ? ['s', position.displayName, position.id] : ['p', position.seq],
        b: binding(workspaceId, filter),
      };
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${body}.${sign(key, body).toString('base64url')}`;
    },
    decode(cursor, workspaceId, filter) {
      const [body, mac, extra] = cursor.split('.');
      if (body === undefined || mac === undefined || extra !== undefined || body === '') {
        throw new CursorError('the cursor is not one this server issued');
      }
      const expected = sign(key, body);
      const given = Buffer.from(mac, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new CursorError('the cursor is not one this server issued');
      }
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
      if (payload.b !== binding(workspaceId, filter)) {
        throw new CursorError('the cursor was issued for different filters; start again without a cursor');
      }
      const [section, a, b] = payload.p;
      if (section === 's' && typeof a === 'string' && typeof b === 'string') {
        return { section: 'shared', displayName: a, id: b };
      }
      if (section === 'p' && typeof a === 'number') return { section: 'personal', seq: a };
      throw new CursorError('the cursor is not one this server issued');
    },
  };
}
