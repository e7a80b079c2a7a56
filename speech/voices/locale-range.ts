// The `locale` filter of the voice list: a BCP-47 range matched by whole subtags, case-insensitively.

const RANGE = /^[a-z]{1,8}(-[a-z0-9]{1,8})*$/i;

/** The normalised (lower-case) range, or null when `text` is not a BCP-47 range we accept. */
export function parseLocaleRange(text: string): string | null {
  return RANGE.test(text) ? text.toLowerCase() : null;
}

/** True when `locale` equals `range` or extends it by whole subtags (`en` matches en-US, `e` matches nothing). */
export function localeMatches(locale: string, range: string): boolean {
  const l = locale.toLowerCase();
  return l === range || l.startsWith(`${range}-`);
}
