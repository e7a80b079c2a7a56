// Benchmark: how fast one snapshot change reaches N ADS sidecars and comes back ACKed. Run: npx tsx test/bench/operator-ads-fanout.ts [sidecars] [rounds]
import { credentials } from '@grpc/grpc-js';
import { performance } from 'node:perf_hooks';
import { buildXdsResource } from '../../operator/ratelimit/resource-builder.js';
import { createAdsServer } from '../../operator/xds/ads-server.js';
import { createSnapshotCache } from '../../operator/xds/snapshot-cache.js';
import { RATE_LIMIT_CONFIG_TYPE_URL } from '../../operator/xds/type-urls.js';
import { createXdsGrpcServer } from '../../operator/xds/xds-grpc-server.js';
import {
  AggregatedDiscoveryServiceClient,
  type DiscoveryResponse,
} from '../../proto/gen/envoy/service/discovery/v3/discovery.js';
import { systemClock } from '../../sidecar/clock.js';
import { silentLogger } from '../../sidecar/logger.js';

const sidecars = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 20);
const configsPerNamespace = 20;

function resources(round: number) {
  return Array.from({ length: configsPerNamespace }, (_, i) =>
    buildXdsResource('bench', `cfg-${i}`, {
      domain: `d${i}`,
      descriptors: [
        {
          key: 'k',
          value: '',
          rateLimit: { unit: 'minute', requestsPerUnit: 100 + round, unlimited: false, replaces: [] },
          shadowMode: false,
          detailedMetric: false,
          quotaMode: false,
          descriptors: [],
        },
      ],
    }),
  );
}

async function main(): Promise<void> {
  const cache = createSnapshotCache({ globalNamespaces: [] });
  cache.setResources(resources(0));
  const ads = createAdsServer({ cache, logger: silentLogger, clock: systemClock });
  const server = createXdsGrpcServer(ads, undefined);
  const port = await server.listen('127.0.0.1', 0);
  // One channel per sidecar, as separate pods would have.
  const clients = Array.from(
    { length: sidecars },
    () => new AggregatedDiscoveryServiceClient(`127.0.0.1:${port}`, credentials.createInsecure()),
  );
  let waiting = 0;
  let roundDone: () => void = () => undefined;
  const streams = clients.map((client, i) => {
    const stream = client.streamAggregatedResources();
    const node = {
      id: `bench/pod-${i}`,
      cluster: '',
      metadata: { namespace: 'bench' },
      locality: undefined,
      userAgentName: '',
      clientFeatures: [],
    };
    stream.on('data', (r: DiscoveryResponse) => {
      stream.write({
        versionInfo: r.versionInfo,
        node,
        resourceNames: [],
        typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
        responseNonce: r.nonce,
        errorDetail: undefined,
      });
      waiting -= 1;
      if (waiting === 0) roundDone();
    });
    stream.on('error', () => undefined);
    return { stream, node };
  });
  const connectStart = performance.now();
  waiting = sidecars;
  await new Promise<void>((resolve) => {
    roundDone = resolve;
    for (const { stream, node } of streams) {
      stream.write({
        versionInfo: '',
        node,
        resourceNames: [],
        typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
        responseNonce: '',
        errorDetail: undefined,
      });
    }
  });
  const connectMs = performance.now() - connectStart;
  const times: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    waiting = sidecars;
    const start = performance.now();
    await new Promise<void>((resolve) => {
      roundDone = resolve;
      cache.setResources(resources(round));
    });
    times.push(performance.now() - start);
  }
  // Let the last ACKs land before measuring the server's view.
  await new Promise((r) => setTimeout(r, 200));
  const acked = ads.sidecars().filter((s) => s.ackedVersion === cache.snapshotFor('bench').version).length;
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!.toFixed(1);
  const bytes = cache.snapshotFor('bench').sizeBytes;
  console.log(
    `sidecars=${sidecars} configs=${configsPerNamespace} response=${bytes}B first-sync=${connectMs.toFixed(1)}ms ` +
      `change→all-delivered p50=${pct(50)}ms p95=${pct(95)}ms max=${pct(100)}ms acked-by-server=${acked}/${sidecars}`,
  );
  for (const { stream } of streams) stream.cancel();
  for (const c of clients) c.close();
  await server.shutdown(1000);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
