// Parsers for environment values in the syntax upstream's Go service accepts (strconv, time.ParseDuration, envconfig).
// Each returns undefined for a malformed value; the caller turns that into a SettingsError naming the variable.

/** Go strconv.ParseBool: 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False. */
export function parseGoBool(text: string): boolean | undefined {
  switch (text) {
    case '1':
    case 't':
    case 'T':
    case 'TRUE':
    case 'true':
    case 'True':
      return true;
    case '0':
    case 'f':
    case 'F':
    case 'FALSE':
    case 'false':
    case 'False':
      return false;
    default:
      return undefined;
  }
}

const INT_PATTERNS: readonly [RegExp, number][] = [
  [/^0[xX]_?([0-9a-fA-F]+(_[0-9a-fA-F]+)*)$/, 16],
  [/^0[bB]_?([01]+(_[01]+)*)$/, 2],
  [/^0[oO]_?([0-7]+(_[0-7]+)*)$/, 8],
  // A leading 0 means octal in Go's base-0 parsing (`010` is 8).
  [/^0_?([0-7]+(_[0-7]+)*)$/, 8],
  [/^([1-9](_?[0-9])*|0)$/, 10],
];

/**
 * Go strconv.ParseInt(text, 0, 64) as envconfig calls it: optional sign, base prefixes 0x/0o/0b/0, underscores
 * between digits. Returns undefined when malformed or outside the safe integer range.
 */
export function parseGoInt(text: string): number | undefined {
  let sign = 1;
  let body = text;
  if (body.startsWith('+') || body.startsWith('-')) {
    if (body.startsWith('-')) sign = -1;
    body = body.slice(1);
  }
  for (const [pattern, radix] of INT_PATTERNS) {
    const m = pattern.exec(body);
    if (m === null) continue;
    const digits = (radix === 10 ? m[0] : (m[1] ?? '')).replace(/_/g, '');
    let value = 0;
    for (const ch of digits) value = value * radix + parseInt(ch, radix);
    if (!Number.isSafeInteger(value)) return undefined;
    return sign * value;
  }
  return undefined;
}

/** Go strconv.ParseFloat for decimal input: `0.8`, `.5`, `1e-3`, `1_000.5`, `inf`, `NaN`. */
export function parseGoFloat(text: string): number | undefined {
  const lower = text.toLowerCase();
  if (/^[+-]?(inf|infinity)$/.test(lower)) return lower.startsWith('-') ? -Infinity : Infinity;
  if (lower === 'nan') return NaN;
  if (!/^[+-]?(\d(_?\d)*(\.(\d(_?\d)*)?)?|\.\d(_?\d)*)([eE][+-]?\d(_?\d)*)?$/.test(text)) return undefined;
  const value = Number(text.replace(/_/g, ''));
  return Number.isNaN(value) ? undefined : value;
}

const DURATION_UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign
  μs: 1e-3, // U+03BC Greek mu
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Go time.ParseDuration, in milliseconds (fractional below 1 ms): a sequence of decimal numbers with units,
 * `1h2m3.5s`, `150us`, `-1.5h`; a bare `0` is allowed; every other number needs a unit.
 */
export function parseGoDurationMs(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest.startsWith('-')) sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  const part = /^(\d*)(?:\.(\d*))?([^\d.]+)/;
  while (rest.length > 0) {
    const m = part.exec(rest);
    if (m === null) return undefined;
    const whole = m[1] ?? '';
    const frac = m[2];
    const unit = m[3] ?? '';
    if (whole === '' && (frac === undefined || frac === '')) return undefined;
    const scale = DURATION_UNIT_MS[unit];
    if (scale === undefined) return undefined;
    const number = Number(`${whole === '' ? '0' : whole}.${frac ?? ''}0`);
    total += number * scale;
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

/**
 * envconfig's map syntax `k1:v1,k2:v2` (each item split at its first `:`). An empty string is an empty map.
 * Returns undefined when an item has no `:`.
 */
export function parseGoMap(text: string): Readonly<Record<string, string>> | undefined {
  const out: Record<string, string> = {};
  if (text === '') return out;
  for (const item of text.split(',')) {
    const colon = item.indexOf(':');
    if (colon < 0) return undefined;
    out[item.slice(0, colon)] = item.slice(colon + 1);
  }
  return out;
}

/** envconfig's list syntax: comma-separated; an empty string is an empty list. */
export function parseGoList(text: string): readonly string[] {
  return text === '' ? [] : text.split(',');
}
