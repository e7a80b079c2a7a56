// ShouldRateLimit with the real config loader (YAML) on the memory backend: keys, stats names, replaces, wildcards.
import { expect } from 'chai';
import { RateLimitResponse_Code } from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { ManualClock } from '../../../../sidecar/clock.js';
import { loadRateLimitConfig } from '../../../../sidecar/config/index.js';
import type { CounterOp } from '../../../../sidecar/limiter/backend.js';
import { createMemoryBackend } from '../../../../sidecar/limiter/backend-memory.js';
import { createFixedWindowLimiter } from '../../../../sidecar/limiter/fixed-window-limiter.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { createRateLimitService } from '../../../../sidecar/service/rate-limit-service.js';
import { createRateLimitStatsCache } from '../../../../sidecar/stats/rate-limit-stats.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { descriptor, request } from '../../../support/rate-limit-fakes.js';

const YAML = `
domain: web
descriptors:
  - key: files
    value: "files/*"
    share_threshold: true
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: ip
    value_to_metric: true
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: plan
    value: free
    rate_limit: { unit: minute, requests_per_unit: 1, name: free }
  - key: plan
    value: vip
    rate_limit: { unlimited: true, replaces: [{ name: free }] }
  - key: beta
    shadow_mode: true
    rate_limit: { unit: second, requests_per_unit: 0 }
`;

describe('rate limit service with the real config loader', () => {
  it('shares wildcard counters, names stats by the config, applies replaces from unlimited rules', async () => {
    const clock = new ManualClock(1_000_000_000);
    const stats = new StatsStore();
    const rateLimitStats = createRateLimitStatsCache(stats);
    const memory = createMemoryBackend({ clock });
    const sent: CounterOp[] = [];
    const limiter = createFixedWindowLimiter({
      backend: { ...memory, increment: (ops) => (sent.push(...ops), memory.increment(ops)) },
      localCache: undefined,
      stats: rateLimitStats,
      clock,
      settings: {
        cacheKeyPrefix: 'p_',
        nearLimitRatio: 0.8,
        expirationJitterMaxSeconds: 0,
        stopCacheKeyIncrementWhenOverlimit: false,
      },
    });
    const config = loadRateLimitConfig([{ name: 'config.web.yaml', yaml: YAML }], { mergeDomainConfig: false });
    const service = createRateLimitService({
      getConfig: () => config,
      limiter,
      stats,
      clock,
      logger: silentLogger,
      rateLimitStats,
      settings: {
        shadowMode: false,
        quotaMode: false,
        responseDynamicMetadata: false,
        responseHeaders: { enabled: false, limitHeader: 'L', remainingHeader: 'R', resetHeader: 'Z' },
      },
    });
    const counter = (name: string) => stats.counter(`ratelimit.service.rate_limit.${name}`).value();

    // share_threshold: different values of the wildcard share one counter (limit 2 → third is over).
    const codes: number[] = [];
    for (const file of ['files/a', 'files/b', 'files/c']) {
      const r = await service.shouldRateLimit(request('web', [descriptor({ files: file })]));
      codes.push(r.overallCode);
    }
    expect(codes).to.deep.equal([1, 1, 2]);
    expect(sent[0]!.key).to.equal('p_web_files_files/*_999960');
    expect(counter('web.files_files/*.total_hits')).to.equal(3);

    // value_to_metric on a key-only rule: stats carry the (sanitised) runtime value; the key carries the value.
    await service.shouldRateLimit(request('web', [descriptor({ ip: '10.0.0.5' })]));
    expect(sent.at(-1)!.key).to.equal('p_web_ip_10.0.0.5_997200');
    expect(counter('web.ip_10_0_0_5.total_hits')).to.equal(1);

    // The vip rule is unlimited and replaces "free": free is not counted, vip reports 4294967295.
    const replaced = await service.shouldRateLimit(
      request('web', [descriptor({ plan: 'free' }), descriptor({ plan: 'vip' })]),
    );
    expect(replaced.statuses.map((s) => [s.code, s.limitRemaining])).to.deep.equal([
      [RateLimitResponse_Code.OK, 0],
      [RateLimitResponse_Code.OK, 4294967295],
    ]);
    expect(counter('web.plan_free.total_hits')).to.equal(0);

    // Shadow rule with limit 0: OK, counted as over and shadow.
    const shadow = await service.shouldRateLimit(request('web', [descriptor({ beta: 'x' })]));
    expect(shadow.overallCode).to.equal(RateLimitResponse_Code.OK);
    expect([counter('web.beta.over_limit'), counter('web.beta.shadow_mode')]).to.deep.equal([1, 1]);

    // An unknown domain counts domain_not_found per descriptor.
    await service.shouldRateLimit(request('other', [descriptor({ a: '1' }), descriptor({ b: '2' })]));
    expect(counter('other.domain_not_found')).to.equal(2);
    await limiter.close();
  });
});
