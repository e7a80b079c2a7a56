// A descriptor wildcard pattern (`*` anywhere, several allowed), split once at load time for an allocation-free match.

export interface WildcardPattern {
  /** The composite `key_value` (or `key`) as configured, e.g. `path_/api/*\/users/*`. */
  readonly source: string;
  matches(text: string): boolean;
}

/**
 * Each `*` matches zero or more characters; the literal segments must appear in order, the first one as a prefix
 * and the last one as a suffix, without overlapping (so `a*a` does not match `a`).
 */
export function compileWildcard(source: string): WildcardPattern {
  const segments = source.split('*');
  const prefix = segments[0] ?? '';
  const suffix = segments.length > 1 ? (segments[segments.length - 1] ?? '') : '';
  const middles = segments.slice(1, -1).filter((s) => s !== '');
  const minLength = prefix.length + suffix.length + middles.reduce((n, s) => n + s.length, 0);
  return {
    source,
    matches(text: string): boolean {
      if (text.length < minLength || !text.startsWith(prefix) || !text.endsWith(suffix)) return false;
      const end = text.length - suffix.length;
      let pos = prefix.length;
      for (const middle of middles) {
        // Leftmost placement is enough: with only `*`, an earlier match never prevents a later one.
        const at = text.indexOf(middle, pos);
        if (at < 0 || at + middle.length > end) return false;
        pos = at + middle.length;
      }
      return true;
    },
  };
}
