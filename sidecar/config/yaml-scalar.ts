// Plain-scalar resolution as Go's gopkg.in/yaml.v2 does it (YAML 1.1 booleans, base-0 integers, timestamps).

/** A resolved scalar. `int` keeps full 64-bit precision; `timestamp` stays text, as yaml.v2 gives interface{}. */
export type ResolvedScalar =
  | { readonly kind: 'null' }
  | { readonly kind: 'str'; readonly value: string }
  | { readonly kind: 'bool'; readonly value: boolean }
  | { readonly kind: 'int'; readonly value: bigint }
  | { readonly kind: 'float'; readonly value: number }
  | { readonly kind: 'timestamp'; readonly value: string };

const NULL: ResolvedScalar = { kind: 'null' };
const TRUE: ResolvedScalar = { kind: 'bool', value: true };
const FALSE: ResolvedScalar = { kind: 'bool', value: false };

// yaml.v2 resolve.go's table: only these exact spellings, so `tRUE` stays a string.
const FIXED: ReadonlyMap<string, ResolvedScalar> = new Map<string, ResolvedScalar>([
  ...['y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON', 'true', 'True', 'TRUE'].map((s): [string, ResolvedScalar] => [
    s,
    TRUE,
  ]),
  ...['n', 'N', 'no', 'No', 'NO', 'off', 'Off', 'OFF', 'false', 'False', 'FALSE'].map((s): [string, ResolvedScalar] => [
    s,
    FALSE,
  ]),
  ...['', '~', 'null', 'Null', 'NULL'].map((s): [string, ResolvedScalar] => [s, NULL]),
  ...['.nan', '.NaN', '.NAN'].map((s): [string, ResolvedScalar] => [s, { kind: 'float', value: Number.NaN }]),
  ...['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF'].map((s): [string, ResolvedScalar] => [
    s,
    { kind: 'float', value: Number.POSITIVE_INFINITY },
  ]),
  ...['-.inf', '-.Inf', '-.INF'].map((s): [string, ResolvedScalar] => [
    s,
    { kind: 'float', value: Number.NEGATIVE_INFINITY },
  ]),
]);

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const DOT_FLOAT = /^\.[0-9]+([eE][-+]?[0-9]+)?$/;
const TIMESTAMP =
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]*)?([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?)?$/;

/** Go strconv.ParseInt/ParseUint with base 0 (0x, 0o, 0b, leading-0 octal), without the range check. */
function parseGoInt(text: string): bigint | undefined {
  let s = text;
  let negative = false;
  if (s.startsWith('+') || s.startsWith('-')) {
    negative = s.startsWith('-');
    s = s.slice(1);
  }
  let digits: RegExp;
  let prefix = '';
  if (/^0[xX]/.test(s)) {
    digits = /^[0-9a-fA-F]+$/;
    prefix = '0x';
    s = s.slice(2);
  } else if (/^0[bB]/.test(s)) {
    digits = /^[01]+$/;
    prefix = '0b';
    s = s.slice(2);
  } else if (/^0[oO]/.test(s)) {
    digits = /^[0-7]+$/;
    prefix = '0o';
    s = s.slice(2);
  } else if (s.length > 1 && s.startsWith('0')) {
    digits = /^[0-7]+$/;
    prefix = '0o';
    s = s.slice(1);
  } else {
    digits = /^[0-9]+$/;
  }
  if (!digits.test(s)) return undefined;
  const magnitude = BigInt(prefix + s);
  return negative ? -magnitude : magnitude;
}

/** Resolves an untagged plain scalar exactly as yaml.v2's resolve() (64-bit platform). */
export function resolvePlainScalar(text: string): ResolvedScalar {
  const fixed = FIXED.get(text);
  if (fixed !== undefined) return fixed;
  const first = text.charAt(0);
  if (first === '.') {
    return DOT_FLOAT.test(text) ? { kind: 'float', value: Number(text) } : { kind: 'str', value: text };
  }
  if (first === '+' || first === '-' || (first >= '0' && first <= '9')) {
    if (TIMESTAMP.test(text)) return { kind: 'timestamp', value: text };
    const plain = text.replace(/_/g, '');
    const int = parseGoInt(plain);
    if (int !== undefined && int >= INT64_MIN && int <= UINT64_MAX) return { kind: 'int', value: int };
    if (YAML_STYLE_FLOAT.test(plain)) return { kind: 'float', value: Number(plain) };
    if (plain.startsWith('0b') || plain.startsWith('-0b')) {
      const neg = plain.startsWith('-');
      const bits = plain.slice(neg ? 3 : 2);
      if (/^[01]+$/.test(bits)) {
        const v = BigInt('0b' + bits);
        if ((neg ? -v : v) >= INT64_MIN && v <= (neg ? -INT64_MIN : UINT64_MAX)) {
          return { kind: 'int', value: neg ? -v : v };
        }
      }
    }
  }
  return { kind: 'str', value: text };
}

/** True when an int is what yaml.v2 hands to interface{} as a Go `int` (not uint64). */
export function fitsGoInt(value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX;
}

/** Go's `%v` for a float64: strconv 'g' with the shortest digits, so 1e+06 but 123456 and 0.0001. */
export function formatGoFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa, expText] = value.toExponential().split('e');
  const exp = Number(expText);
  // With the shortest precision strconv switches to %e at exponent 6 (not at the digit count).
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const abs = Math.abs(exp);
    return `${mantissa}e${sign}${abs < 10 ? '0' : ''}${abs}`;
  }
  return String(value);
}
