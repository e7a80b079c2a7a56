// Random, prefixed, URL-safe identifiers for stored records (ws_…, mem_…, key_…, voice_…, cc_…).
import { randomBytes } from 'node:crypto';

/** A new id `<prefix>_<20 base32 chars>` (100 random bits); never reused, safe in URLs and logs. */
export function newId(prefix: string): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = randomBytes(20);
  let out = '';
  for (const b of bytes) out += alphabet[b & 31];
  return `${prefix}_${out}`;
}
