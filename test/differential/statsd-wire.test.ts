// Differential: the statsd lines both services send over TCP (USE_STATSD=true), names and summed values.
import { expect } from 'chai';
import { startStatsdCollector, type StatsdCollector, type StatsdTotals } from './statsd-collector.js';
import { diffBackend, startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, sameGrpc, sameGrpcRepeated } from './steps.js';

const RULES = `
domain: wire
descriptors:
  - key: k
    rate_limit: { unit: hour, requests_per_unit: 5 }
  - key: s
    shadow_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: d
    detailed_metric: true
    rate_limit: { unit: hour, requests_per_unit: 10 }
`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function pick(map: ReadonlyMap<string, number>, prefixes: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of [...map.keys()].sort()) {
    if (prefixes.some((p) => name.startsWith(p)) && (map.get(name) ?? 0) !== 0) out[name] = map.get(name) ?? 0;
  }
  return out;
}

/** Stat names only upstream sends, with the reason: `ratelimit.go.*` are Go runtime stats. */
const UPSTREAM_ONLY = [/^ratelimit\.go\./];

function statNames(totals: StatsdTotals): string[] {
  return [
    ...[...totals.counters.keys()].map((k) => `${k}|c`),
    ...[...totals.gauges.keys()].map((k) => `${k}|g`),
    ...[...totals.timers].map((k) => `${k}|ms`),
  ].sort();
}

const COUNTER_PREFIXES = [
  'ratelimit.service.rate_limit.',
  'ratelimit.service.call.',
  'ratelimit_server.ShouldRateLimit.',
];

/** Waits until `name` reached `value` in the collector (flushes are periodic), or fails after timeoutMs. */
async function waitForCounter(
  collector: StatsdCollector,
  label: string,
  name: string,
  value: number,
): Promise<StatsdTotals> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const totals = collector.totals();
    if ((totals.counters.get(name) ?? 0) >= value) return totals;
    if (Date.now() > deadline) {
      throw new Error(
        `${label}: ${name} reached ${totals.counters.get(name) ?? 0}, not ${value}; got ${JSON.stringify(pick(totals.counters, ['']))}`,
      );
    }
    await sleep(100);
  }
}

describe('differential: statsd over TCP', function () {
  this.timeout(60_000);
  let pair: ServicePair;
  let upstreamStatsd: StatsdCollector;
  let oursStatsd: StatsdCollector;

  before(async () => {
    upstreamStatsd = await startStatsdCollector();
    oursStatsd = await startStatsdCollector();
    pair = await startServicePair({
      files: { 'wire.yaml': RULES },
      env: { USE_STATSD: 'true', STATSD_HOST: '127.0.0.1', STATS_FLUSH_INTERVAL: '100ms' },
      upstreamEnv: { STATSD_PORT: String(upstreamStatsd.port) },
      oursEnv: { STATSD_PORT: String(oursStatsd.port) },
    });
  });
  after(async () => {
    await pair?.stop();
    await upstreamStatsd?.close();
    await oursStatsd?.close();
  });

  it('the same counters with the same totals, the same timers, no malformed lines', async () => {
    await sameGrpcRepeated(pair, 'k', request('wire', [desc([['k', 'a']])]), 7);
    await sameGrpcRepeated(pair, 's', request('wire', [desc([['s', 'a']])]), 3);
    await sameGrpc(pair, 'd', request('wire', [desc([['d', '10.1.2.3']])], 4));
    await sameGrpc(pair, 'unknown domain', request('nowhere', [desc([['k', 'a']])]));
    await sameGrpc(pair, 'empty domain', request('', [desc([['k', 'a']])]), { expectError: true });
    // 13 calls in all: wait until both flushed them, then one more interval for the rest of that flush.
    const name = 'ratelimit_server.ShouldRateLimit.total_requests';
    await waitForCounter(upstreamStatsd, 'upstream', name, 13);
    await waitForCounter(oursStatsd, 'ours', name, 13);
    await sleep(300);
    const up = upstreamStatsd.totals();
    const ours = oursStatsd.totals();
    expect(pick(ours.counters, COUNTER_PREFIXES)).to.deep.equal(pick(up.counters, COUNTER_PREFIXES));
    expect(pick(up.counters, ['ratelimit.service.rate_limit.wire.k.total_hits'])).to.deep.equal({
      'ratelimit.service.rate_limit.wire.k.total_hits': 7,
    });
    const responseTime = 'ratelimit_server.ShouldRateLimit.response_time';
    expect(up.timers.has(responseTime)).to.equal(true);
    expect(ours.timers.has(responseTime), `ours sends ${responseTime}`).to.equal(true);
    // On the memory backend ours has its own store gauges instead of the Redis pool's.
    const backendStats = diffBackend() === 'memory' ? [/^ratelimit\.redis_pool\./, /^ratelimit\.memory\./] : [];
    const comparable = (names: string[]): string[] =>
      names.filter((n) => ![...UPSTREAM_ONLY, ...backendStats].some((re) => re.test(n)));
    // The filter applies to both sides, so the self-check (upstream as "ours") passes too.
    expect(comparable(statNames(ours)), 'stat names and types').to.deep.equal(comparable(statNames(up)));
    expect(ours.malformed).to.deep.equal([]);
    expect(up.malformed).to.deep.equal([]);
  });
});
