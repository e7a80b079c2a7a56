// Differential: every unit, with SECOND/MINUTE requests aligned inside one window so both see the same window.
import { RateLimitUnit } from '../../proto/gen/envoy/type/v3/ratelimit_unit.js';
import { startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, sameCounterDeltas, sameGrpcRepeated, snapshotCounters } from './steps.js';

const RULES = `
domain: units
descriptors:
  - key: second
    rate_limit: { unit: second, requests_per_unit: 2 }
  - key: minute
    rate_limit: { unit: MINUTE, requests_per_unit: 2 }
  - key: week
    rate_limit: { unit: week, requests_per_unit: 2 }
  - key: month
    rate_limit: { unit: Month, requests_per_unit: 2 }
  - key: year
    rate_limit: { unit: year, requests_per_unit: 2 }
`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the wall clock is just past a second boundary (and, for minutes, not in a minute's last 5 s), so a
 * short burst of requests to both services lands in one window of each unit.
 */
async function alignToWindowStart(forMinute: boolean): Promise<void> {
  for (;;) {
    const now = Date.now();
    const msIntoSecond = now % 1000;
    const secondIntoMinute = Math.floor(now / 1000) % 60;
    if (msIntoSecond < 50 && (!forMinute || secondIntoMinute < 55)) return;
    await sleep(msIntoSecond < 50 ? 1000 : 1000 - msIntoSecond + 5);
  }
}

/**
 * Runs `burst` (given a fresh descriptor value per attempt) right after a second boundary; if a slow machine let
 * it spill into the next second, the attempt is discarded and retried, since the two services may then have
 * seen different windows.
 */
async function inOneSecond(burst: (value: string) => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await alignToWindowStart(false);
    const startSecond = Math.floor(Date.now() / 1000);
    try {
      await burst(`attempt${attempt}`);
      return;
    } catch (err) {
      if (Math.floor(Date.now() / 1000) === startSecond || attempt >= 5) throw err;
    }
  }
}

describe('differential: time units', function () {
  this.timeout(60_000);
  let pair: ServicePair;

  before(async () => {
    pair = await startServicePair({ files: { 'units.yaml': RULES } });
  });
  after(async () => {
    await pair?.stop();
  });

  it('SECOND: a burst inside one second, then the next second starts fresh', async () => {
    let value = '';
    await inOneSecond(async (v) => {
      value = v;
      await sameGrpcRepeated(pair, 'second', request('units', [desc([['second', v]])]), 3);
    });
    await inOneSecond(async () => {
      await sameGrpcRepeated(pair, 'next second', request('units', [desc([['second', value]])]), 1);
    });
  });

  it('MINUTE, WEEK, MONTH, YEAR rules and a SECOND override', async () => {
    const before = await snapshotCounters(pair);
    await alignToWindowStart(true);
    await sameGrpcRepeated(pair, 'minute', request('units', [desc([['minute', 'a']])]), 3);
    for (const unit of ['week', 'month', 'year']) {
      await sameGrpcRepeated(pair, unit, request('units', [desc([[unit, 'a']])]), 3);
    }
    await inOneSecond(async (v) => {
      await sameGrpcRepeated(
        pair,
        'second override',
        request('units', [desc([['any', v]], { limit: { requestsPerUnit: 1, unit: RateLimitUnit.SECOND } })]),
        2,
      );
    });
    await sameCounterDeltas(pair, 'units', before);
  });
});
