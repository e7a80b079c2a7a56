// Parsers for the memcached text-protocol replies this client uses: get, incr, add.
import type { ReplyParser } from './memcache-connection.js';
import { MemcacheError } from './memcache-error.js';

const CRLF = Buffer.from('\r\n');

/** The first line of `buffer` without its CRLF and the offset after it, or undefined when incomplete. */
function readLine(buffer: Buffer, from: number): { readonly line: string; readonly next: number } | undefined {
  const end = buffer.indexOf(CRLF, from);
  if (end < 0) return undefined;
  return { line: buffer.toString('latin1', from, end), next: end + 2 };
}

/** ERROR, CLIENT_ERROR … and SERVER_ERROR … lines become a thrown server_error; anything else too. */
function unexpected(command: string, line: string): never {
  throw new MemcacheError('server_error', `memcache: unexpected response line from ${command}: '${line}'`);
}

/**
 * `get k1 k2 …` → `VALUE <key> <flags> <bytes> [<cas>]` + data blocks, then `END`. Values are returned as
 * latin1 text (counters are ASCII digits), keyed by the key the server echoed.
 */
export const parseGetReply: ReplyParser<Map<string, string>> = (buffer) => {
  const items = new Map<string, string>();
  let offset = 0;
  for (;;) {
    const header = readLine(buffer, offset);
    if (header === undefined) return undefined;
    if (header.line === 'END') return { value: items, consumed: header.next };
    const parts = header.line.split(' ');
    if (parts[0] !== 'VALUE' || (parts.length !== 4 && parts.length !== 5) || !/^\d+$/.test(parts[3]!)) {
      unexpected('get', header.line);
    }
    const size = Number(parts[3]);
    if (buffer.length < header.next + size + 2) return undefined;
    if (buffer[header.next + size] !== 0x0d || buffer[header.next + size + 1] !== 0x0a) {
      throw new MemcacheError('server_error', 'memcache: corrupt get result read');
    }
    items.set(parts[1]!, buffer.toString('latin1', header.next, header.next + size));
    offset = header.next + size + 2;
  }
};

/**
 * `incr` → the new value, or 'miss' for `NOT_FOUND`. Expected outcomes are values, not throws, so that the
 * connection stays reusable (gomemcache's resumableError).
 */
export const parseIncrReply: ReplyParser<number | 'miss'> = (buffer) => {
  const r = readLine(buffer, 0);
  if (r === undefined) return undefined;
  if (r.line === 'NOT_FOUND') return { value: 'miss', consumed: r.next };
  if (!/^\d+$/.test(r.line)) unexpected('incr', r.line);
  return { value: Number(r.line), consumed: r.next };
};

/** `add` → 'stored' or 'not_stored' (values for the same reason as incr's miss). */
export const parseStoreReply: ReplyParser<'stored' | 'not_stored'> = (buffer) => {
  const r = readLine(buffer, 0);
  if (r === undefined) return undefined;
  if (r.line === 'STORED') return { value: 'stored', consumed: r.next };
  if (r.line === 'NOT_STORED') return { value: 'not_stored', consumed: r.next };
  return unexpected('add', r.line);
};
