// Strict proto3 JSON decoding of a RateLimitRequest for /json, with protojson's rules (upstream uses jsonpb).
import type {
  RateLimitDescriptor,
  RateLimitDescriptor_Entry,
  RateLimitDescriptor_RateLimitOverride,
} from '../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js';
import type { RateLimitRequest } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';

/** The body is not a valid proto3 JSON RateLimitRequest; `message` says where. */
export class JsonRequestError extends Error {
  readonly code = 'invalid_json_request';
  constructor(message: string) {
    super(message);
    this.name = 'JsonRequestError';
  }
}

type JsonObject = Record<string, unknown>;

const UNIT_NUMBERS: Readonly<Record<string, number>> = {
  UNKNOWN: 0,
  SECOND: 1,
  MINUTE: 2,
  HOUR: 3,
  DAY: 4,
  MONTH: 5,
  YEAR: 6,
  WEEK: 7,
};

function fail(message: string): never {
  throw new JsonRequestError(message);
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Resolves the message's fields: each JSON name must be a field's camelCase or original name, at most once.
 * @param fields map of accepted JSON name → canonical field name
 */
function fieldsOf(obj: JsonObject, fields: Readonly<Record<string, string>>, message: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [name, value] of Object.entries(obj)) {
    const field = fields[name];
    if (field === undefined) fail(`unknown field "${name}" in ${message}`);
    if (out.has(field)) fail(`duplicate field "${name}" in ${message}`);
    // null is the default value of any field in proto3 JSON.
    if (value !== null) out.set(field, value);
  }
  return out;
}

function str(v: unknown, where: string): string {
  if (typeof v !== 'string') fail(`invalid value for string field ${where}`);
  return v;
}

/** An integer given as a JSON number or a string holding one (protojson accepts both, also `1e2`). */
function integer(v: unknown, where: string, max: number): number {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') {
    // The string must hold a JSON number (no spaces, no leading zeros, no hex), as protojson requires.
    if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(v)) {
      fail(`invalid value for integer field ${where}: ${JSON.stringify(v)}`);
    }
    // Plain digits are checked exactly: doubles cannot tell 2^64 - 1 from 2^64.
    if (/^\d+$/.test(v) && BigInt(v) > BigInt(max === UINT64_MAX ? '18446744073709551615' : max)) {
      fail(`invalid value for unsigned integer field ${where}: ${v}`);
    }
    n = Number(v);
  } else fail(`invalid value for integer field ${where}`);
  if (!Number.isInteger(n) || n < 0 || n > max) fail(`invalid value for unsigned integer field ${where}: ${String(v)}`);
  return n;
}

function array(v: unknown, where: string): unknown[] {
  if (!Array.isArray(v)) fail(`invalid value for repeated field ${where}`);
  return v;
}

const UINT32_MAX = 0xffffffff;
// 2^64 - 1 rounds to 2^64 as a double; values this large are only compared, never counted exactly.
const UINT64_MAX = 2 ** 64;

function decodeEntry(v: unknown): RateLimitDescriptor_Entry {
  if (!isObject(v)) fail('invalid value for message Entry');
  const f = fieldsOf(v, { key: 'key', value: 'value' }, 'RateLimitDescriptor.Entry');
  return { key: str(f.get('key') ?? '', 'key'), value: str(f.get('value') ?? '', 'value') };
}

function decodeOverride(v: unknown): RateLimitDescriptor_RateLimitOverride {
  if (!isObject(v)) fail('invalid value for message RateLimitOverride');
  const f = fieldsOf(
    v,
    { requestsPerUnit: 'requestsPerUnit', requests_per_unit: 'requestsPerUnit', unit: 'unit' },
    'RateLimitDescriptor.RateLimitOverride',
  );
  let unit = 0;
  const rawUnit = f.get('unit');
  if (typeof rawUnit === 'string') {
    const n = UNIT_NUMBERS[rawUnit];
    if (n === undefined) fail(`invalid value for enum field unit: ${JSON.stringify(rawUnit)}`);
    unit = n;
  } else if (typeof rawUnit === 'number') {
    // Proto3 enums are open: any int32 number is accepted.
    if (!Number.isInteger(rawUnit) || rawUnit < -0x80000000 || rawUnit > 0x7fffffff) {
      fail(`invalid value for enum field unit: ${rawUnit}`);
    }
    unit = rawUnit;
  } else if (rawUnit !== undefined) fail('invalid value for enum field unit');
  const rpu = f.get('requestsPerUnit');
  return { requestsPerUnit: rpu === undefined ? 0 : integer(rpu, 'requestsPerUnit', UINT32_MAX), unit };
}

function decodeDescriptor(v: unknown): RateLimitDescriptor {
  if (!isObject(v)) fail('invalid value for message RateLimitDescriptor');
  const f = fieldsOf(
    v,
    { entries: 'entries', limit: 'limit', hitsAddend: 'hitsAddend', hits_addend: 'hitsAddend' },
    'RateLimitDescriptor',
  );
  const entries = f.get('entries');
  const limit = f.get('limit');
  const hits = f.get('hitsAddend');
  return {
    entries: entries === undefined ? [] : array(entries, 'entries').map(decodeEntry),
    limit: limit === undefined ? undefined : decodeOverride(limit),
    // google.protobuf.UInt64Value is written as its bare value (number or string).
    hitsAddend: hits === undefined ? undefined : integer(hits, 'hitsAddend', UINT64_MAX),
  };
}

/**
 * The first object member name that appears twice in one object of a valid JSON text, or undefined. JSON.parse keeps
 * the last duplicate silently; protojson refuses the body, so we must see them.
 */
export function findDuplicateKey(text: string): string | undefined {
  const objects: (Set<string> | undefined)[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const raw = text.slice(i, end + 1);
      i = end + 1;
      while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
      const members = objects[objects.length - 1];
      if (text[i] === ':' && members !== undefined) {
        const name = JSON.parse(raw) as string;
        if (members.has(name)) return name;
        members.add(name);
      }
      continue;
    }
    if (ch === '{') objects.push(new Set());
    else if (ch === '[') objects.push(undefined);
    else if (ch === '}' || ch === ']') objects.pop();
    i++;
  }
  return undefined;
}

/**
 * Decodes a /json body. Rules (protojson): the body is one JSON object; field names in camelCase or as in the
 * proto; unknown or repeated fields, wrong types and negative or fractional integers are errors; null means default.
 * @throws JsonRequestError for anything else
 */
export function decodeJsonRequest(body: string): RateLimitRequest {
  if (body.trim() === '') fail('empty body');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    fail(`malformed JSON: ${(err as Error).message}`);
  }
  if (!isObject(parsed)) fail('the body must be a JSON object');
  const duplicate = findDuplicateKey(body);
  if (duplicate !== undefined) fail(`duplicate field "${duplicate}"`);
  const f = fieldsOf(
    parsed,
    { domain: 'domain', descriptors: 'descriptors', hitsAddend: 'hitsAddend', hits_addend: 'hitsAddend' },
    'RateLimitRequest',
  );
  const descriptors = f.get('descriptors');
  const hits = f.get('hitsAddend');
  return {
    domain: str(f.get('domain') ?? '', 'domain'),
    descriptors: descriptors === undefined ? [] : array(descriptors, 'descriptors').map(decodeDescriptor),
    hitsAddend: hits === undefined ? 0 : integer(hits, 'hitsAddend', UINT32_MAX),
  };
}
