// Rejects RateLimitRequest bytes whose string fields are not valid UTF-8, as protobuf-go does (ts-proto substitutes U+FFFD).

/** Field number → `'string'` or the schema of a nested message; other fields are skipped. */
interface Schema {
  readonly [field: number]: 'string' | Schema;
}

const ENTRY: Schema = { 1: 'string', 2: 'string' };
const DESCRIPTOR: Schema = { 1: ENTRY };
const RATE_LIMIT_REQUEST: Schema = { 1: 'string', 2: DESCRIPTOR };

const fatalDecoder = new TextDecoder('utf-8', { fatal: true });

/** The message bytes could not be read as protobuf, or a string field is not UTF-8. */
export class WireFormatError extends Error {
  readonly code = 'invalid_wire_format';
  constructor(message: string) {
    super(message);
    this.name = 'WireFormatError';
  }
}

function readVarint(buf: Uint8Array, state: { pos: number }, end: number): number {
  let result = 0;
  let shift = 0;
  for (;;) {
    if (state.pos >= end) throw new WireFormatError('proto: cannot parse invalid wire-format data');
    const byte = buf[state.pos++] ?? 0;
    if (shift < 49) result += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return result;
    shift += 7;
    if (shift > 63) throw new WireFormatError('proto: cannot parse invalid wire-format data');
  }
}

function checkMessage(buf: Uint8Array, start: number, end: number, schema: Schema): void {
  const state = { pos: start };
  while (state.pos < end) {
    const tag = readVarint(buf, state, end);
    const field = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0:
        readVarint(buf, state, end);
        break;
      case 1:
        state.pos += 8;
        break;
      case 5:
        state.pos += 4;
        break;
      case 2: {
        const length = readVarint(buf, state, end);
        const from = state.pos;
        state.pos += length;
        if (state.pos > end) throw new WireFormatError('proto: cannot parse invalid wire-format data');
        const kind = schema[field];
        if (kind === 'string') {
          try {
            fatalDecoder.decode(buf.subarray(from, state.pos));
          } catch {
            throw new WireFormatError('string field contains invalid UTF-8');
          }
        } else if (kind !== undefined) checkMessage(buf, from, state.pos, kind);
        break;
      }
      default:
        throw new WireFormatError('proto: cannot parse invalid wire-format data');
    }
  }
}

/**
 * Checks every string of a serialized RateLimitRequest (domain, entry keys and values).
 * @throws WireFormatError naming the problem
 */
export function checkRateLimitRequestUtf8(buf: Uint8Array): void {
  checkMessage(buf, 0, buf.length, RATE_LIMIT_REQUEST);
}
