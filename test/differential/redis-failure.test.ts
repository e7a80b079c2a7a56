// Differential: Redis restarted and Redis gone: error codes, /json, health and stats of both services.
import { expect } from 'chai';
import { comparableOutcome, type ComparableOutcome } from './compare.js';
import { httpCall } from './rls-client.js';
import { diffBackend, startServicePair, type DiffService, type ServicePair } from './service-pair.js';
import { desc, request, sameCounterDeltas, sameGrpc, sameHttp, snapshotCounters } from './steps.js';

const RULES = `
domain: rf
descriptors:
  - key: k
    rate_limit: { unit: hour, requests_per_unit: 3 }
`;

const REQ = request('rf', [desc([['k', 'v']])]);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Asks until the service has answered three rounds of 10 concurrent probes without an error (it reconnects on its
 * own), or fails after timeoutMs. Upstream's radix pool (REDIS_POOL_SIZE 10) hands out each dead connection once,
 * failing that request ("response returned from Conn: EOF"); concurrent probes make it use all ten.
 */
async function waitForRecovery(service: DiffService, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: ComparableOutcome | undefined;
  let cleanRounds = 0;
  while (Date.now() < deadline) {
    // Probes use their own value, so the counter the test compares afterwards is untouched.
    const round = await Promise.all(
      Array.from({ length: 10 }, () => service.client.shouldRateLimit(request('rf', [desc([['k', 'probe']])]), 2000)),
    );
    const failed = round.map((o) => comparableOutcome(o)).find((o) => o.kind === 'error');
    last = failed ?? last;
    cleanRounds = failed === undefined ? cleanRounds + 1 : 0;
    if (cleanRounds >= 3) return;
    if (failed !== undefined) await sleep(200);
  }
  throw new Error(`${service.label} did not recover: ${JSON.stringify(last)}\n${service.output().slice(-2000)}`);
}

describe('differential: Redis restarted or gone', function () {
  this.timeout(90_000);
  let pair: ServicePair;

  before(async function () {
    pair = await startServicePair({ files: { 'rf.yaml': RULES } });
  });
  after(async () => {
    await pair?.stop();
  });

  it('after a Redis restart (counters lost) both reconnect and count from zero alike', async () => {
    await sameGrpc(pair, 'before restart', REQ);
    await Promise.all([pair.upstream.redis.restart(), pair.ours.redis.restart()]);
    await Promise.all([waitForRecovery(pair.upstream), waitForRecovery(pair.ours)]);
    if (diffBackend() === 'memory') return; // our counters live in memory, so there is nothing lost to compare
    for (let i = 1; i <= 4; i++) await sameGrpc(pair, `after restart #${i}`, REQ);
  });

  it('Redis gone: gRPC UNKNOWN, /json 400, health unchanged, redis_error and total_hits counted alike', async () => {
    const before = await snapshotCounters(pair);
    await Promise.all([pair.upstream.redis.stop(), pair.ours.redis.stop()]);
    const up = comparableOutcome(await pair.upstream.client.shouldRateLimit(REQ, 8000));
    const ours = comparableOutcome(await pair.ours.client.shouldRateLimit(REQ, 8000));
    expect(up).to.deep.include({ kind: 'error', code: 2 });
    if (diffBackend() === 'redis') {
      // The message is the Redis driver's own text (radix vs ioredis), so only the code is compared.
      expect(ours).to.deep.include({ kind: 'error', code: 2 });
      const body = JSON.stringify({ domain: 'rf', descriptors: [{ entries: [{ key: 'k', value: 'v' }] }] });
      await sameHttp(pair, '/json with Redis gone', '/json', body);
      await sameHttp(pair, '/healthcheck with Redis gone', '/healthcheck', undefined, 'GET');
      await sameCounterDeltas(pair, 'Redis gone', before, 'ratelimit.service.');
    } else {
      // The memory backend has no Redis to lose.
      expect(ours.kind).to.equal('response');
      expect((await httpCall(pair.ours.httpUrl, '/healthcheck', undefined, 'GET')).status).to.equal(200);
    }
  });
});
