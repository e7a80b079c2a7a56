// ShouldRateLimit (§2.4–§2.7): validation, replaces, unlimited, quota, headers, global shadow, dynamic metadata.
import { expect } from 'chai';
import type { RateLimitUnit } from '../../../../proto/gen/envoy/type/v3/ratelimit_unit.js';
import {
  RateLimitResponse_Code,
  type RateLimitResponse,
} from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { ManualClock } from '../../../../sidecar/clock.js';
import type { RateLimit, RateLimitConfig } from '../../../../sidecar/config/types.js';
import { BackendError, ServiceError } from '../../../../sidecar/errors.js';
import { createMemoryBackend } from '../../../../sidecar/limiter/backend-memory.js';
import { createFixedWindowLimiter, type RateLimiter } from '../../../../sidecar/limiter/fixed-window-limiter.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import {
  createRateLimitService,
  mergeFirstWins,
  overrideToProtoText,
  UNLIMITED_REMAINING,
  type RateLimitServiceSettings,
} from '../../../../sidecar/service/rate-limit-service.js';
import { createRateLimitStatsCache } from '../../../../sidecar/stats/rate-limit-stats.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { descriptor, fakeConfig, makeLimit, request } from '../../../support/rate-limit-fakes.js';

const OK = RateLimitResponse_Code.OK;
const OVER = RateLimitResponse_Code.OVER_LIMIT;

interface Options {
  config?: RateLimitConfig | undefined;
  settings?: Partial<RateLimitServiceSettings>;
  headers?: boolean;
  limiter?: RateLimiter;
}

function build(opts: Options) {
  const clock = new ManualClock(2222_000);
  const stats = new StatsStore();
  const limiter =
    opts.limiter ??
    createFixedWindowLimiter({
      backend: createMemoryBackend({ clock }),
      localCache: undefined,
      stats: createRateLimitStatsCache(stats),
      clock,
      settings: {
        cacheKeyPrefix: '',
        nearLimitRatio: 0.8,
        expirationJitterMaxSeconds: 0,
        stopCacheKeyIncrementWhenOverlimit: false,
      },
    });
  const service = createRateLimitService({
    getConfig: () => opts.config,
    limiter,
    stats,
    clock,
    logger: silentLogger,
    settings: {
      shadowMode: false,
      quotaMode: false,
      responseDynamicMetadata: false,
      responseHeaders: {
        enabled: opts.headers ?? false,
        limitHeader: 'RateLimit-Limit',
        remainingHeader: 'RateLimit-Remaining',
        resetHeader: 'RateLimit-Reset',
      },
      ...opts.settings,
    },
  });
  return { service, stats, clock, limiter, counter: (name: string) => stats.counter(name).value() };
}

const headersOf = (r: RateLimitResponse) => r.responseHeadersToAdd.map((h) => `${h.key}: ${h.value}`);
const codes = (r: RateLimitResponse) => [r.overallCode, ...r.statuses.map((s) => s.code)];

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('rate limit service', () => {
  describe('validation (§2.4 step 1)', () => {
    const config = fakeConfig('d', {});
    for (const [name, req, code, message, cfg] of [
      [
        'empty domain',
        request('', [descriptor({ a: '1' })]),
        'empty_domain',
        'rate limit domain must not be empty',
        config,
      ],
      ['no descriptors', request('d', []), 'empty_descriptors', 'rate limit descriptor list must not be empty', config],
      [
        'no config',
        request('d', [descriptor({ a: '1' })]),
        'no_config',
        'no rate limit configuration loaded',
        undefined,
      ],
    ] as const) {
      it(`${name}: ServiceError '${message}', counted as service_error`, async () => {
        const { service, counter } = build({ config: cfg });
        const err = await rejection(service.shouldRateLimit(req));
        expect(err).to.be.instanceOf(ServiceError);
        expect((err as ServiceError).code).to.equal(code);
        expect((err as ServiceError).message).to.equal(message);
        expect(counter('ratelimit.service.call.should_rate_limit.service_error')).to.equal(1);
      });
    }

    it('a config getLimit error (bad override) is a service_error', async () => {
      const bad: RateLimitConfig = {
        ...fakeConfig('d', {}),
        getLimit: () => {
          throw new ServiceError('invalid_override', 'bad unit');
        },
      };
      const { service, counter } = build({ config: bad });
      expect(await rejection(service.shouldRateLimit(request('d', [descriptor({ a: '1' })])))).to.be.instanceOf(
        ServiceError,
      );
      expect(counter('ratelimit.service.call.should_rate_limit.service_error')).to.equal(1);
    });

    it('a backend failure is a redis_error', async () => {
      const failing: RateLimiter = {
        doLimit: async () => {
          throw new BackendError('connection refused');
        },
        close: async () => undefined,
      };
      const config = fakeConfig('d', { 'a=1': makeLimit({ requestsPerUnit: 1, unit: 'MINUTE' }) });
      const { service, counter } = build({ config, limiter: failing });
      const err = await rejection(service.shouldRateLimit(request('d', [descriptor({ a: '1' })])));
      expect((err as Error).message).to.equal('connection refused');
      expect(counter('ratelimit.service.call.should_rate_limit.redis_error')).to.equal(1);
      expect(counter('ratelimit.service.call.should_rate_limit.service_error')).to.equal(0);
    });
  });

  it('unknown domain: OK per descriptor and domain_not_found per descriptor (sanitised)', async () => {
    const { service, counter } = build({ config: fakeConfig('d', {}) });
    const r = await service.shouldRateLimit(request('other:x', [descriptor({ a: '1' }), descriptor({ b: '2' })]));
    expect(codes(r)).to.deep.equal([OK, OK, OK]);
    expect(counter('ratelimit.service.rate_limit.other_x.domain_not_found')).to.equal(2);
  });

  it('unlimited: OK with remaining 4294967295 and no current_limit; its replaces still apply', async () => {
    const config = fakeConfig('d', {
      'u=1': makeLimit({ requestsPerUnit: 0, unit: 'SECOND', unlimited: true, replaces: ['strict'] }),
      's=1': makeLimit({ requestsPerUnit: 0, unit: 'MINUTE', name: 'strict', fullKey: 'd.s_1' }),
    });
    const { service, counter } = build({ config });
    const r = await service.shouldRateLimit(request('d', [descriptor({ u: '1' }), descriptor({ s: '1' })]));
    expect(r.statuses[0]).to.deep.equal({
      code: OK,
      currentLimit: undefined,
      limitRemaining: UNLIMITED_REMAINING,
      durationUntilReset: undefined,
      quota: undefined,
    });
    expect(r.statuses[1]).to.deep.include({ code: OK, currentLimit: undefined, limitRemaining: 0 });
    expect(r.overallCode).to.equal(OK);
    expect(counter('ratelimit.service.rate_limit.d.s_1.total_hits')).to.equal(0);
  });

  it('replaces: a named limit replaced by another matched limit is not counted', async () => {
    const config = fakeConfig('d', {
      'a=1': makeLimit({ requestsPerUnit: 10, unit: 'MINUTE', replaces: ['b'], fullKey: 'd.a_1' }),
      'b=1': makeLimit({ requestsPerUnit: 0, unit: 'MINUTE', name: 'b', fullKey: 'd.b_1' }),
      'c=1': makeLimit({ requestsPerUnit: 0, unit: 'MINUTE', name: 'c', fullKey: 'd.c_1' }),
    });
    const { service } = build({ config });
    const r = await service.shouldRateLimit(
      request('d', [descriptor({ a: '1' }), descriptor({ b: '1' }), descriptor({ c: '1' })]),
    );
    expect(codes(r)).to.deep.equal([OVER, OK, OK, OVER]);
    expect(r.statuses[1]!.currentLimit).to.equal(undefined);
  });

  describe('quota mode (§2.4 step 6)', () => {
    const quota = makeLimit({ requestsPerUnit: 0, unit: 'MINUTE', quotaMode: true, fullKey: 'd.q' });
    const quotaOk = makeLimit({ requestsPerUnit: 100, unit: 'MINUTE', quotaMode: true, fullKey: 'd.q2' });
    const plainOk = makeLimit({ requestsPerUnit: 100, unit: 'MINUTE', fullKey: 'd.p' });
    const plainOver = makeLimit({ requestsPerUnit: 0, unit: 'MINUTE', fullKey: 'd.p0' });
    const config = fakeConfig('d', { 'q=1': quota, 'q=2': quotaOk, 'p=1': plainOk, 'p=0': plainOver });

    it('a single over quota descriptor makes the overall OVER (all quota descriptors over)', async () => {
      const { service } = build({ config });
      expect(codes(await service.shouldRateLimit(request('d', [descriptor({ q: '1' })])))).to.deep.equal([OVER, OVER]);
    });

    it('one over and one passing quota descriptor: overall OK', async () => {
      const { service } = build({ config });
      const r = await service.shouldRateLimit(request('d', [descriptor({ q: '1' }), descriptor({ q: '2' })]));
      expect(codes(r)).to.deep.equal([OK, OVER, OK]);
    });

    it('a non-quota over descriptor decides alone', async () => {
      const { service } = build({ config });
      const r = await service.shouldRateLimit(request('d', [descriptor({ q: '2' }), descriptor({ p: '0' })]));
      expect(r.overallCode).to.equal(OVER);
    });

    it('QUOTA_MODE: every descriptor is quota; an unmatched one counts as passed', async () => {
      const { service } = build({ config, settings: { quotaMode: true } });
      const overOnly = await service.shouldRateLimit(request('d', [descriptor({ p: '0' })]));
      expect(overOnly.overallCode).to.equal(OVER);
      const withUnmatched = await service.shouldRateLimit(
        request('d', [descriptor({ p: '0' }), descriptor({ x: '1' })]),
      );
      expect(codes(withUnmatched)).to.deep.equal([OK, OVER, OK]);
    });
  });

  describe('RateLimit-* headers (§2.6)', () => {
    it('MINUTE limit at clock 2222 gives Reset 58; the smallest remaining is chosen', async () => {
      const config = fakeConfig('d', {
        'a=1': makeLimit({ requestsPerUnit: 10, unit: 'MINUTE' }),
        'b=1': makeLimit({ requestsPerUnit: 5, unit: 'MINUTE' }),
      });
      const { service } = build({ config, headers: true });
      const r = await service.shouldRateLimit(request('d', [descriptor({ a: '1' }), descriptor({ b: '1' })]));
      expect(headersOf(r)).to.deep.equal(['RateLimit-Limit: 5', 'RateLimit-Remaining: 4', 'RateLimit-Reset: 58']);
    });

    it('the last non-quota OVER_LIMIT wins over a smaller remaining; quota OVER does not', async () => {
      const config = fakeConfig('d', {
        'a=1': makeLimit({ requestsPerUnit: 0, unit: 'HOUR' }),
        'b=1': makeLimit({ requestsPerUnit: 0, unit: 'MINUTE' }),
        'q=1': makeLimit({ requestsPerUnit: 0, unit: 'SECOND', quotaMode: true }),
      });
      const { service } = build({ config, headers: true });
      const r = await service.shouldRateLimit(
        request('d', [descriptor({ a: '1' }), descriptor({ b: '1' }), descriptor({ q: '1' })]),
      );
      expect(headersOf(r)).to.deep.equal(['RateLimit-Limit: 0', 'RateLimit-Remaining: 0', 'RateLimit-Reset: 58']);
    });

    it('custom names; no headers without a limited descriptor or when disabled', async () => {
      const config = fakeConfig('d', {
        'a=1': makeLimit({ requestsPerUnit: 3, unit: 'SECOND' }),
        'u=1': makeLimit({ requestsPerUnit: 0, unit: 'SECOND', unlimited: true }),
      });
      const custom = build({
        config,
        headers: true,
        settings: {
          responseHeaders: { enabled: true, limitHeader: 'X-L', remainingHeader: 'X-R', resetHeader: 'X-Z' },
        },
      });
      const r = await custom.service.shouldRateLimit(request('d', [descriptor({ a: '1' })]));
      expect(headersOf(r)).to.deep.equal(['X-L: 3', 'X-R: 2', 'X-Z: 1']);
      const none = await custom.service.shouldRateLimit(request('d', [descriptor({ u: '1' }), descriptor({ x: '1' })]));
      expect(none.responseHeadersToAdd).to.deep.equal([]);
      const off = build({ config });
      expect(
        (await off.service.shouldRateLimit(request('d', [descriptor({ a: '1' })]))).responseHeadersToAdd,
      ).to.deep.equal([]);
    });

    it('headers are chosen before the global shadow override', async () => {
      const config = fakeConfig('d', { 'a=1': makeLimit({ requestsPerUnit: 0, unit: 'MINUTE' }) });
      const { service } = build({ config, headers: true, settings: { shadowMode: true } });
      const r = await service.shouldRateLimit(request('d', [descriptor({ a: '1' })]));
      expect(r.overallCode).to.equal(OK);
      expect(headersOf(r)).to.deep.equal(['RateLimit-Limit: 0', 'RateLimit-Remaining: 0', 'RateLimit-Reset: 58']);
    });
  });

  it('global shadow mode: overall OK, statuses keep OVER_LIMIT, global_shadow_mode += 1', async () => {
    const config = fakeConfig('d', { 'a=1': makeLimit({ requestsPerUnit: 0, unit: 'MINUTE' }) });
    const { service, counter } = build({ config, settings: { shadowMode: true } });
    const r = await service.shouldRateLimit(request('d', [descriptor({ a: '1' })]));
    expect(codes(r)).to.deep.equal([OK, OVER]);
    expect(counter('ratelimit.service.global_shadow_mode')).to.equal(1);
    const pass = fakeConfig('d', { 'a=1': makeLimit({ requestsPerUnit: 9, unit: 'MINUTE' }) });
    const other = build({ config: pass, settings: { shadowMode: true } });
    await other.service.shouldRateLimit(request('d', [descriptor({ a: '1' })]));
    expect(other.counter('ratelimit.service.global_shadow_mode')).to.equal(0);
  });

  describe('dynamic metadata (§2.7)', () => {
    it('domain, descriptors with entries/limit/hitsAddend, request hitsAddend, merged metadata of passed ones', async () => {
      const config: RateLimitConfig = {
        ...fakeConfig('d', {}),
        getLimit: (_d, desc) => limits[desc.entries[0]!.key],
      };
      const limits: Record<string, RateLimit> = {
        a: makeLimit({ requestsPerUnit: 9, unit: 'MINUTE', metadata: { team: 'x', nested: { one: 1, keep: 'a' } } }),
        b: makeLimit({ requestsPerUnit: 9, unit: 'MINUTE', metadata: { team: 'y', nested: { keep: 'b', two: 2 } } }),
        o: makeLimit({ requestsPerUnit: 0, unit: 'MINUTE', metadata: { over: true } }),
        s: makeLimit({ requestsPerUnit: 0, unit: 'MINUTE', shadowMode: true, metadata: { shadow: true } }),
        u: makeLimit({ requestsPerUnit: 0, unit: 'MINUTE', unlimited: true, metadata: { unlimited: true } }),
      };
      const { service } = build({ config, settings: { responseDynamicMetadata: true } });
      const withOverride = descriptor({ o: 'v' }, 1);
      withOverride.limit = { requestsPerUnit: 10, unit: 2 };
      const r = await service.shouldRateLimit(
        request(
          'd',
          [descriptor({ a: '1' }), descriptor({ b: '' }), withOverride, descriptor({ s: '1' }), descriptor({ u: '1' })],
          3,
        ),
      );
      expect(r.dynamicMetadata).to.deep.equal({
        domain: 'd',
        descriptors: [
          { entries: ['a=1'] },
          { entries: ['b='] },
          { entries: ['o=v'], limit: 'requests_per_unit:10 unit:MINUTE', hitsAddend: 1 },
          { entries: ['s=1'] },
          { entries: ['u=1'] },
        ],
        hitsAddend: 3,
        metadata: { team: 'x', nested: { one: 1, keep: 'a', two: 2 }, shadow: true },
      });
      expect(limits.a!.metadata).to.deep.equal({ team: 'x', nested: { one: 1, keep: 'a' } });
    });

    it('omits hitsAddend 0 and empty metadata; absent when disabled', async () => {
      const config = fakeConfig('d', { 'a=1': makeLimit({ requestsPerUnit: 9, unit: 'MINUTE' }) });
      const on = build({ config, settings: { responseDynamicMetadata: true } });
      const r = await on.service.shouldRateLimit(request('d', [descriptor({ a: '1' })]));
      expect(r.dynamicMetadata).to.deep.equal({ domain: 'd', descriptors: [{ entries: ['a=1'] }] });
      const off = build({ config });
      expect((await off.service.shouldRateLimit(request('d', [descriptor({ a: '1' })]))).dynamicMetadata).to.equal(
        undefined,
      );
    });

    it('overrideToProtoText omits zero fields and prints unknown enum numbers', () => {
      expect(overrideToProtoText({ requestsPerUnit: 0, unit: 3 })).to.equal('unit:HOUR');
      expect(overrideToProtoText({ requestsPerUnit: 5, unit: 0 })).to.equal('requests_per_unit:5');
      expect(overrideToProtoText({ requestsPerUnit: 5, unit: 42 as RateLimitUnit })).to.equal(
        'requests_per_unit:5 unit:42',
      );
    });

    it('mergeFirstWins keeps the first scalar and merges nested objects, arrays are values', () => {
      const target: Record<string, unknown> = { a: 1, n: { x: 1 }, l: [1] };
      mergeFirstWins(target, { a: 2, n: { x: 2, y: 3 }, l: [2], z: { deep: true } });
      expect(target).to.deep.equal({ a: 1, n: { x: 1, y: 3 }, l: [1], z: { deep: true } });
    });
  });

  it('a shadow rule over its limit: status OK with remaining 0, shadow_mode stat', async () => {
    const config = fakeConfig('d', {
      'a=1': makeLimit({ requestsPerUnit: 0, unit: 'MINUTE', shadowMode: true, fullKey: 'd.a_1' }),
    });
    const { service, counter } = build({ config });
    const r = await service.shouldRateLimit(request('d', [descriptor({ a: '1' })]));
    expect(codes(r)).to.deep.equal([OK, OK]);
    expect(r.statuses[0]!.limitRemaining).to.equal(0);
    expect(counter('ratelimit.service.rate_limit.d.a_1.shadow_mode')).to.equal(1);
    expect(counter('ratelimit.service.rate_limit.d.a_1.over_limit')).to.equal(1);
  });
});
