// One page of GET /v1/voices: filters first, then keyset pagination with a signed cursor.
import type { VoiceFilter, VoicePosition, VoiceRecord, VoiceRepository } from '../store/index.js';
import type { VoiceCursorCodec } from './voice-cursor.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export interface VoiceListRequest {
  readonly workspaceId: string;
  readonly filter: VoiceFilter;
  /** Page size 1-200, or null for the whole list in one response. */
  readonly limit: number | null;
  /** Cursor from the previous page, or null for the first page. */
  readonly cursor: string | null;
}

export interface VoicePage {
  readonly voices: readonly VoiceRecord[];
  readonly hasMore: boolean;
  /** Cursor of the next page; null when hasMore is false. */
  readonly nextCursor: string | null;
}

function positionOf(voice: VoiceRecord): VoicePosition {
  return voice.type === 'shared'
    ? { section: 'shared', displayName: voice.displayName, id: voice.id }
    : { section: 'personal', seq: voice.seq };
}

/** Lists voices; a cursor without a limit pages by DEFAULT_PAGE_SIZE. Throws CursorError for a bad cursor. */
export async function listVoicePage(
  voices: VoiceRepository,
  cursors: VoiceCursorCodec,
  request: VoiceListRequest,
): Promise<VoicePage> {
  const after = request.cursor === null ? null : cursors.decode(request.cursor, request.workspaceId, request.filter);
  const limit = request.limit ?? (request.cursor === null ? null : DEFAULT_PAGE_SIZE);
  if (limit === null) {
    const all = await voices.listVisible(request.workspaceId, request.filter, null, null);
    return { voices: all, hasMore: false, nextCursor: null };
  }
  // One extra row tells whether another page exists without a count query.
  const rows = await voices.listVisible(request.workspaceId, request.filter, after, limit + 1);
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return {
    voices: page,
    hasMore,
    nextCursor:
      hasMore && last !== undefined ? cursors.encode(positionOf(last), request.workspaceId, request.filter) : null,
  };
}
