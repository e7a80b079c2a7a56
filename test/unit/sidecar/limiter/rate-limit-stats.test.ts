// Per-limit stats names, sanitisation and the bounded stats cache.
import { expect } from 'chai';
import { sanitizeStatsKey } from '../../../../sidecar/config/stats-key.js';
import { createRateLimitStatsCache } from '../../../../sidecar/stats/rate-limit-stats.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';

describe('rate-limit-stats', () => {
  it('names the six counters after the sanitised key and returns the same object per key', () => {
    const store = new StatsStore();
    const cache = createRateLimitStatsCache(store);
    const s = cache.forKey('domain.ip_10.0.0.5|x:y');
    expect(s.totalHits.name).to.equal('ratelimit.service.rate_limit.domain.ip_10_0_0_5_x_y.total_hits');
    expect(s.overLimitWithLocalCache.name).to.equal(
      'ratelimit.service.rate_limit.domain.ip_10_0_0_5_x_y.over_limit_with_local_cache',
    );
    expect([s.overLimit, s.nearLimit, s.withinLimit, s.shadowMode].map((c) => c.name.split('.').pop())).to.deep.equal([
      'over_limit',
      'near_limit',
      'within_limit',
      'shadow_mode',
    ]);
    expect(cache.forKey('domain.ip_10.0.0.5|x:y')).to.equal(s);
    expect(cache.domainNotFound('a:b').name).to.equal('ratelimit.service.rate_limit.a_b.domain_not_found');
  });

  it('is bounded: the oldest key is dropped, and a re-created entry still adds to the same counters', () => {
    const store = new StatsStore();
    const cache = createRateLimitStatsCache(store, { maxKeys: 2 });
    cache.forKey('a').totalHits.add(1);
    cache.forKey('b');
    cache.forKey('c');
    expect(cache.size()).to.equal(2);
    cache.forKey('a').totalHits.add(2);
    expect(store.counter('ratelimit.service.rate_limit.a.total_hits').value()).to.equal(3);
  });

  it('sanitizeStatsKey only rewrites dots inside IPv4-looking runs', () => {
    expect(sanitizeStatsKey('d.k_1.2.3')).to.equal('d.k_1.2.3');
    expect(sanitizeStatsKey('d.remote_address_192.168.1.10.path')).to.equal('d.remote_address_192_168_1_10.path');
    expect(sanitizeStatsKey('plain')).to.equal('plain');
  });
});
