// Turns service answers into plain comparable values and lines them up, allowing ±1 s on reset times.
import { expect } from 'chai';
import {
  RateLimitResponse_Code,
  RateLimitResponse_RateLimit_Unit,
} from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import type { GrpcOutcome, HttpOutcome } from './rls-client.js';

/** Seconds two reset times may differ by: the services answer a few ms apart and round independently. */
export const RESET_TOLERANCE_SECONDS = 1;

/** Field names whose numeric values are compared with RESET_TOLERANCE_SECONDS. */
const TOLERANT_KEYS = new Set(['durationUntilReset', 'resetSeconds']);

export interface ComparableLimit {
  readonly name: string;
  readonly requestsPerUnit: number;
  readonly unit: string;
}

export interface ComparableStatus {
  readonly code: string;
  readonly currentLimit: ComparableLimit | null;
  readonly limitRemaining: number;
  /** Seconds (fractional if nanos were set); null when the status carries no duration. */
  readonly durationUntilReset: number | null;
}

export interface ComparableHeader {
  readonly key: string;
  readonly value?: string;
  /** Set instead of `value` for the reset header, so it can be compared with a tolerance. */
  readonly resetSeconds?: number;
}

export type ComparableOutcome =
  | {
      readonly kind: 'response';
      readonly overallCode: string;
      readonly statuses: readonly ComparableStatus[];
      readonly headers: readonly ComparableHeader[];
      readonly dynamicMetadata: unknown;
    }
  | { readonly kind: 'error'; readonly code: number; readonly message: string };

/** Normalises a gRPC outcome. `resetHeader` names the header whose value is a number of seconds. */
export function comparableOutcome(outcome: GrpcOutcome, resetHeader = 'RateLimit-Reset'): ComparableOutcome {
  if (outcome.kind === 'error') return outcome;
  const r = outcome.response;
  return {
    kind: 'response',
    overallCode: RateLimitResponse_Code[r.overallCode] ?? String(r.overallCode),
    statuses: r.statuses.map((s) => ({
      code: RateLimitResponse_Code[s.code] ?? String(s.code),
      currentLimit:
        s.currentLimit === undefined
          ? null
          : {
              name: s.currentLimit.name,
              requestsPerUnit: s.currentLimit.requestsPerUnit,
              unit: RateLimitResponse_RateLimit_Unit[s.currentLimit.unit] ?? String(s.currentLimit.unit),
            },
      limitRemaining: s.limitRemaining,
      durationUntilReset:
        s.durationUntilReset === undefined ? null : s.durationUntilReset.seconds + s.durationUntilReset.nanos / 1e9,
    })),
    headers: r.responseHeadersToAdd.map((h) =>
      h.key.toLowerCase() === resetHeader.toLowerCase()
        ? { key: h.key, resetSeconds: Number(h.value) }
        : { key: h.key, value: h.value },
    ),
    dynamicMetadata: canonicalMetadata(r.dynamicMetadata ?? null),
  };
}

/**
 * Go's prototext inserts randomised whitespace (so nobody byte-compares it); the `limit` strings in dynamic
 * metadata are therefore compared with whitespace around `:` removed and other runs collapsed.
 */
function canonicalMetadata(value: unknown, key?: string): unknown {
  if (key === 'limit' && typeof value === 'string')
    return value
      .replace(/\s*:\s*/g, ':')
      .replace(/\s+/g, ' ')
      .trim();
  if (Array.isArray(value)) return value.map((v) => canonicalMetadata(v));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = canonicalMetadata(v, k);
    return out;
  }
  return value;
}

/** Normalises an HTTP outcome: JSON bodies are compared parsed, everything else as text. */
export function comparableHttp(outcome: HttpOutcome): unknown {
  return {
    status: outcome.status,
    contentType: outcome.contentType.split(';')[0]?.trim(),
    body: outcome.json !== undefined ? outcome.json : outcome.text,
  };
}

function durationSeconds(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?s$/.test(value)) return Number(value.slice(0, -1));
  return undefined;
}

/**
 * Returns a copy of `actual` in which every tolerant field that is within RESET_TOLERANCE_SECONDS of the same
 * field in `expected` takes the expected value, so a deep-equal shows only real differences.
 */
export function alignTolerances(expected: unknown, actual: unknown, key?: string): unknown {
  if (key !== undefined && TOLERANT_KEYS.has(key)) {
    const e = durationSeconds(expected);
    const a = durationSeconds(actual);
    if (e !== undefined && a !== undefined && Math.abs(e - a) <= RESET_TOLERANCE_SECONDS) return expected;
    return actual;
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    return actual.map((item, i) => (i < expected.length ? alignTolerances(expected[i], item) : item));
  }
  if (isRecord(expected) && isRecord(actual)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(actual)) out[k] = k in expected ? alignTolerances(expected[k], v, k) : v;
    return out;
  }
  return actual;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Asserts that ours answered like upstream (reset times within tolerance). */
export function expectSame(label: string, upstream: unknown, ours: unknown): void {
  expect(alignTolerances(upstream, ours), label).to.deep.equal(upstream);
}

/** Non-zero counter changes between two snapshots, limited to names starting with `prefix`, as a sorted object. */
export function counterDeltas(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  prefix: string,
): Record<string, number> {
  const out: Record<string, number> = {};
  const names = [...new Set([...before.keys(), ...after.keys()])].filter((n) => n.startsWith(prefix)).sort();
  for (const name of names) {
    const delta = (after.get(name) ?? 0) - (before.get(name) ?? 0);
    if (delta !== 0) out[name] = delta;
  }
  return out;
}
