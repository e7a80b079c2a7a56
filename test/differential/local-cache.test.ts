// Differential: the local over-limit cache (LOCAL_CACHE_SIZE_IN_BYTES), alone and with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT.
import { expect } from 'chai';
import { startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, sameCounterDeltas, sameGrpcRepeated, snapshotCounters } from './steps.js';

const RULES = `
domain: lc
descriptors:
  - key: small
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: big
    rate_limit: { unit: day, requests_per_unit: 100 }
  - key: shadow
    rate_limit: { unit: hour, requests_per_unit: 1 }
    shadow_mode: true
`;

for (const stopIncrement of [false, true]) {
  describe(`differential: local over-limit cache${stopIncrement ? ' with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT' : ''}`, function () {
    this.timeout(60_000);
    let pair: ServicePair;

    before(async () => {
      pair = await startServicePair({
        files: { 'lc.yaml': RULES },
        env: {
          LOCAL_CACHE_SIZE_IN_BYTES: String(1024 * 1024),
          STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: String(stopIncrement),
        },
      });
    });
    after(async () => {
      await pair?.stop();
    });

    it('keys over the limit are answered from the cache; over_limit_with_local_cache counted', async () => {
      const before = await snapshotCounters(pair);
      await sameGrpcRepeated(pair, 'small alone', request('lc', [desc([['small', 'a']])]), 5);
      await sameGrpcRepeated(
        pair,
        'small (cached) + big',
        request('lc', [desc([['small', 'a']]), desc([['big', 'a']])]),
        3,
      );
      await sameGrpcRepeated(pair, 'shadow rule over', request('lc', [desc([['shadow', 'a']])]), 3);
      const deltas = await sameCounterDeltas(pair, 'local cache', before);
      expect(deltas['ratelimit.service.rate_limit.lc.small.over_limit_with_local_cache']).to.be.greaterThan(0);
    });
  });
}
