// Differential: STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT with two limits on one request, and default header names.
import { startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, sameCounterDeltas, sameGrpcRepeated, snapshotCounters } from './steps.js';

const RULES = `
domain: stop
descriptors:
  - key: key2
    rate_limit: { unit: day, requests_per_unit: 20 }
  - key: key3
    rate_limit: { unit: hour, requests_per_unit: 10 }
`;

describe('differential: STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT', function () {
  this.timeout(60_000);
  let pair: ServicePair;

  before(async () => {
    pair = await startServicePair({
      files: { 'stop.yaml': RULES },
      env: { STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: 'true', LIMIT_RESPONSE_HEADERS_ENABLED: 'true' },
    });
  });
  after(async () => {
    await pair?.stop();
  });

  it('the key that would exceed is incremented, the other is frozen (optimistic statuses)', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpcRepeated(pair, 'key2+key3', request('stop', [desc([['key2', 'v']]), desc([['key3', 'v']])]), 13);
    await sameGrpcRepeated(pair, 'key2 alone afterwards', request('stop', [desc([['key2', 'v']])]), 2);
    await sameCounterDeltas(pair, 'stop increment', before);
  });
});
