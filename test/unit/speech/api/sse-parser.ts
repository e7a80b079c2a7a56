// A small Server-Sent Events parser following the WHATWG event-stream rules, for tests of the SSE route.

export interface SseEvent {
  /** Event type; `message` when the stream gave none. */
  readonly event: string;
  readonly data: string;
  readonly id?: string;
}

export interface ParsedStream {
  readonly events: readonly SseEvent[];
  /** Comment lines (without the leading colon), e.g. " keepalive". */
  readonly comments: readonly string[];
}

/** Parses a complete event stream (UTF-8 text). */
export function parseEventStream(text: string): ParsedStream {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let type = '';
  let data: string[] = [];
  let id: string | undefined;
  // Lines end in CRLF, LF or CR; a BOM at the start is dropped.
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  for (const line of lines) {
    if (line === '') {
      if (data.length > 0)
        events.push({
          event: type === '' ? 'message' : type,
          data: data.join('\n'),
          ...(id === undefined ? {} : { id }),
        });
      type = '';
      data = [];
      continue;
    }
    if (line.startsWith(':')) {
      comments.push(line.slice(1));
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) id = value;
  }
  // An unterminated last event is discarded, as the spec says.
  return { events, comments };
}
