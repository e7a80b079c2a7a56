// The API key format (chs_<lookup prefix>_<secret>), its generation, hashing and constant-time check.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const KEY_PATTERN = /^chs_([a-z2-7]{12})_([A-Za-z0-9_-]{43})$/;

export interface GeneratedKey {
  /** The full key; shown to its owner once and never stored. */
  readonly key: string;
  /** The lookup prefix (12 base32 chars), stored in clear to find the record. */
  readonly prefix: string;
  /** Hex SHA-256 of the full key, the only form that is stored. */
  readonly sha256: string;
}

/** Hex SHA-256 of a key string. A fast hash is enough: the key has 256 random bits, so it cannot be guessed. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A new random key: 60 bits of prefix for lookup plus 256 bits of secret. */
export function generateApiKey(): GeneratedKey {
  let prefix = '';
  for (const b of randomBytes(12)) prefix += PREFIX_ALPHABET[b & 31];
  const key = `chs_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix, sha256: hashApiKey(key) };
}

/** The lookup prefix of a well-formed key, or null when the string cannot be one of our keys. */
export function apiKeyPrefix(key: string): string | null {
  const match = KEY_PATTERN.exec(key);
  return match === null ? null : (match[1] ?? null);
}

/** Compares the key's hash with the stored hash in constant time. */
export function apiKeyMatches(key: string, storedSha256: string): boolean {
  const actual = Buffer.from(hashApiKey(key), 'hex');
  const expected = Buffer.from(storedSha256, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
