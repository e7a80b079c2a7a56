// Building requests and running one request against both services, asserting the answers match.
import type { RateLimitDescriptor } from '../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js';
import type { RateLimitUnit } from '../../proto/gen/envoy/type/v3/ratelimit_unit.js';
import type { RateLimitRequest } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { comparableHttp, comparableOutcome, counterDeltas, expectSame, type ComparableOutcome } from './compare.js';
import { httpCall } from './rls-client.js';
import { diffTarget, type ServicePair } from './service-pair.js';

/** The prefix of the per-rule stats both services must count alike. */
export const RULE_STATS_PREFIX = 'ratelimit.service.rate_limit.';

export interface DescriptorExtras {
  readonly limit?: { readonly requestsPerUnit: number; readonly unit: RateLimitUnit };
  /** Per-descriptor hits_addend (the UInt64Value wrapper); 0 is a real value. */
  readonly hitsAddend?: number;
}

/** A descriptor from ordered `[key, value]` pairs. */
export function desc(
  entries: ReadonlyArray<readonly [string, string]>,
  extras: DescriptorExtras = {},
): RateLimitDescriptor {
  return {
    entries: entries.map(([key, value]) => ({ key, value })),
    limit: extras.limit === undefined ? undefined : { ...extras.limit },
    hitsAddend: extras.hitsAddend,
  };
}

export function request(domain: string, descriptors: RateLimitDescriptor[], hitsAddend = 0): RateLimitRequest {
  return { domain, descriptors, hitsAddend };
}

export interface GrpcStepOptions {
  /** Name of the reset header when LIMIT_RESET_HEADER is customised. */
  readonly resetHeader?: string;
  /**
   * Maps upstream's answer before the comparison. Only for differences between the pinned upstream snapshot and
   * the newer upstream behaviour ours follows (listed in docs/differential-testing.md).
   */
  readonly adjustUpstream?: (outcome: ComparableOutcome) => ComparableOutcome;
  /**
   * The step is meant to fail with a gRPC error. Otherwise upstream must answer with a response, so that two
   * equal errors (e.g. a rule file both rejected) never pass for agreement.
   */
  readonly expectError?: boolean;
}

/** Sends the same request to upstream, then ours; asserts equal answers; returns upstream's (normalised). */
export async function sameGrpc(
  pair: ServicePair,
  label: string,
  req: RateLimitRequest,
  options: GrpcStepOptions = {},
): Promise<ComparableOutcome> {
  const raw = comparableOutcome(await pair.upstream.client.shouldRateLimit(req), options.resetHeader);
  const up = options.adjustUpstream === undefined ? raw : options.adjustUpstream(raw);
  if ((up.kind === 'error') !== (options.expectError ?? false)) {
    throw new Error(
      `${label}: upstream answered ${JSON.stringify(up)}, not what the test expects; upstream log:\n` +
        pair.upstream
          .output()
          .split('\n')
          .filter((l) => !l.includes('gostats.loggingsink'))
          .slice(-20)
          .join('\n'),
    );
  }
  const rawOurs = comparableOutcome(await pair.ours.client.shouldRateLimit(req), options.resetHeader);
  // When upstream plays "ours" too (harness self-check), it needs the same adjustment.
  const ours =
    diffTarget() === 'upstream' && options.adjustUpstream !== undefined ? options.adjustUpstream(rawOurs) : rawOurs;
  expectSame(`${label}: ${JSON.stringify(req)}`, up, ours);
  return up;
}

/** Sends the same request `times` times, comparing every answer; returns upstream's answers. */
export async function sameGrpcRepeated(
  pair: ServicePair,
  label: string,
  req: RateLimitRequest,
  times: number,
  options: GrpcStepOptions = {},
): Promise<ComparableOutcome[]> {
  const out: ComparableOutcome[] = [];
  for (let i = 0; i < times; i++) out.push(await sameGrpc(pair, `${label} #${i + 1}`, req, options));
  return out;
}

/** Sends the same HTTP request to both; asserts equal status, content type and (parsed) body; returns upstream's. */
export async function sameHttp(
  pair: ServicePair,
  label: string,
  path: string,
  body?: string,
  method = 'POST',
): Promise<unknown> {
  const up = comparableHttp(await httpCall(pair.upstream.httpUrl, path, body, method));
  const ours = comparableHttp(await httpCall(pair.ours.httpUrl, path, body, method));
  expectSame(`${label}: ${method} ${path} ${body ?? ''}`, up, ours);
  return up;
}

export interface CounterSnapshot {
  readonly upstream: ReadonlyMap<string, number>;
  readonly ours: ReadonlyMap<string, number>;
}

export async function snapshotCounters(pair: ServicePair): Promise<CounterSnapshot> {
  const [upstream, ours] = await Promise.all([pair.upstream.counters(), pair.ours.counters()]);
  return { upstream, ours };
}

/**
 * Asserts both services changed the same counters (under `prefix`) by the same amounts since `before`;
 * returns upstream's deltas.
 */
export async function sameCounterDeltas(
  pair: ServicePair,
  label: string,
  before: CounterSnapshot,
  prefix = RULE_STATS_PREFIX,
): Promise<Record<string, number>> {
  const after = await snapshotCounters(pair);
  const up = counterDeltas(before.upstream, after.upstream, prefix);
  const ours = counterDeltas(before.ours, after.ours, prefix);
  expectSame(`${label}: stat deltas under ${prefix}`, up, ours);
  return up;
}
