// Interop: the upstream Go ratelimit service (CONFIG_TYPE=GRPC_XDS_SOTW) against our ADS server loads, enforces, NACKs.
import { credentials } from '@grpc/grpc-js';
import { expect } from 'chai';
import type { DescriptorSpec } from '../../../operator/crd/ratelimitconfig-types.js';
import { buildXdsResource } from '../../../operator/ratelimit/resource-builder.js';
import { createAdsServer, type AdsServer } from '../../../operator/xds/ads-server.js';
import { createSnapshotCache, type SnapshotCache } from '../../../operator/xds/snapshot-cache.js';
import { createXdsGrpcServer, type XdsGrpcServer } from '../../../operator/xds/xds-grpc-server.js';
import {
  RateLimitResponse_Code,
  RateLimitServiceClient,
  type RateLimitResponse,
} from '../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { systemClock } from '../../../sidecar/clock.js';
import { silentLogger } from '../../../sidecar/logger.js';
import { requireTool } from '../../support/kube-apiserver.js';
import { freePort, waitForPort } from '../../support/ports.js';
import { startProcess, type RunningProcess } from '../../support/process.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';

function limited(key: string, value: string, requestsPerUnit: number, unit?: 'minute'): DescriptorSpec {
  return {
    key,
    value,
    rateLimit: { ...(unit ? { unit } : {}), requestsPerUnit, unlimited: false, replaces: [] },
    shadowMode: false,
    detailedMetric: false,
    quotaMode: false,
    descriptors: [],
  };
}

async function until(predicate: () => boolean, what: string, proc: RunningProcess): Promise<void> {
  for (let i = 0; i < 600 && !predicate(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!predicate()) throw new Error(`${what} not reached; ratelimit output:\n${proc.output().slice(-3000)}`);
}

describe('upstream ratelimit as a client of our ADS server', function () {
  this.timeout(60_000);
  let redis: RedisServer;
  let cache: SnapshotCache;
  let ads: AdsServer;
  let server: XdsGrpcServer;
  let ratelimit: RunningProcess;
  let rls: InstanceType<typeof RateLimitServiceClient>;
  let adsPort: number;
  const nacks: string[] = [];

  before(async () => {
    const binary = requireTool('ratelimit');
    redis = await startRedisServer();
    cache = createSnapshotCache({ globalNamespaces: [] });
    cache.setResources([
      buildXdsResource('team-a', 'api', { domain: 'edge', descriptors: [limited('path', '/x', 2, 'minute')] }),
    ]);
    ads = createAdsServer({
      cache,
      logger: silentLogger,
      clock: systemClock,
      onNack: (s, r) => nacks.push(`${s.nodeId}|${r.resourceName ?? '?'}|${r.message}`),
    });
    server = createXdsGrpcServer(ads, undefined);
    adsPort = await server.listen('127.0.0.1', 0);
    const [httpPort, grpcPort, debugPort] = [await freePort(), await freePort(), await freePort()];
    ratelimit = startProcess(binary, [], {
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        GRPC_HOST: '127.0.0.1',
        DEBUG_HOST: '127.0.0.1',
        PORT: String(httpPort),
        GRPC_PORT: String(grpcPort),
        DEBUG_PORT: String(debugPort),
        USE_STATSD: 'false',
        LOG_LEVEL: 'debug',
        BACKEND_TYPE: 'redis',
        REDIS_SOCKET_TYPE: 'tcp',
        REDIS_URL: redis.url,
        CONFIG_TYPE: 'GRPC_XDS_SOTW',
        CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${adsPort}`,
        CONFIG_GRPC_XDS_NODE_ID: 'team-a/ratelimit-0',
        CONFIG_GRPC_XDS_NODE_METADATA: 'namespace=team-a',
        XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '200ms',
        XDS_CLIENT_BACKOFF_MAX_INTERVAL: '1s',
        FORCE_START_WITHOUT_INITIAL_CONFIG: 'false',
      },
    });
    await waitForPort(grpcPort, '127.0.0.1', 30_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${ratelimit.output().slice(-3000)}`);
    });
    rls = new RateLimitServiceClient(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
  });

  after(async () => {
    rls?.close();
    await ratelimit?.stop();
    await server?.shutdown(500);
    await redis?.stop();
  });

  function check(domain: string, key: string, value: string): Promise<RateLimitResponse> {
    return new Promise((resolve, reject) =>
      rls.shouldRateLimit(
        {
          domain,
          descriptors: [{ entries: [{ key, value }], limit: undefined, hitsAddend: undefined }],
          hitsAddend: 1,
        },
        (err, res) => (err ? reject(err) : resolve(res)),
      ),
    );
  }

  it('loads the snapshot of its namespace, ACKs it, and enforces it', async () => {
    const version = cache.snapshotFor('team-a').version;
    await until(() => ads.sidecars().some((s) => s.ackedVersion === version), 'ACK of the first snapshot', ratelimit);
    expect(ads.sidecars()[0]?.nodeId).to.equal('team-a/ratelimit-0');
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await check('edge', 'path', '/x')).overallCode);
    expect(codes).to.deep.equal([
      RateLimitResponse_Code.OK,
      RateLimitResponse_Code.OK,
      RateLimitResponse_Code.OVER_LIMIT,
    ]);
  });

  it('NACKs an invalid resource with "<namespace>/<name>: <reason>", which we attribute and park on', async () => {
    const good = buildXdsResource('team-a', 'api', {
      domain: 'edge',
      descriptors: [limited('path', '/x', 2, 'minute')],
    });
    const bad = buildXdsResource('team-a', 'broken', { domain: 'other', descriptors: [limited('k', '', 1)] });
    cache.setResources([good, bad]);
    await until(() => nacks.length > 0, 'a NACK', ratelimit);
    expect(nacks[0]).to.match(/^team-a\/ratelimit-0\|team-a\/broken\|team-a\/broken: /);
    expect(nacks[0]).to.contain('invalid rate limit unit');
    // The old config keeps working.
    expect((await check('edge', 'path', '/x')).overallCode).to.equal(RateLimitResponse_Code.OVER_LIMIT);
    // Dropping the bad resource (what the controller's quarantine does) gets an ACK again.
    cache.setResources([
      good,
      buildXdsResource('team-a', 'more', { domain: 'more', descriptors: [limited('k', '', 1, 'minute')] }),
    ]);
    const fixed = cache.snapshotFor('team-a').version;
    await until(() => ads.sidecars().some((s) => s.ackedVersion === fixed), 'ACK after the fix', ratelimit);
    expect(nacks, 'no NACK loop').to.have.length(1);
    const codes = [
      (await check('more', 'k', 'anything')).overallCode,
      (await check('more', 'k', 'anything')).overallCode,
    ];
    expect(codes).to.deep.equal([RateLimitResponse_Code.OK, RateLimitResponse_Code.OVER_LIMIT]);
  });

  it('comes back after an ADS server restart and resyncs (its first request claims the last received version)', async () => {
    const last = cache.snapshotFor('team-a').version;
    await server.shutdown(200);
    cache = createSnapshotCache({ globalNamespaces: [] });
    cache.setResources([
      buildXdsResource('team-a', 'api', { domain: 'edge', descriptors: [limited('path', '/y', 1, 'minute')] }),
    ]);
    ads = createAdsServer({ cache, logger: silentLogger, clock: systemClock });
    server = createXdsGrpcServer(ads, undefined);
    await server.listen('127.0.0.1', adsPort);
    const next = cache.snapshotFor('team-a').version;
    await until(() => ads.sidecars().some((s) => s.ackedVersion === next), 'ACK from the restarted server', ratelimit);
    expect(ads.sidecars()[0]?.claimedVersion).to.equal(last);
    const codes = [(await check('edge', 'path', '/y')).overallCode, (await check('edge', 'path', '/y')).overallCode];
    expect(codes).to.deep.equal([RateLimitResponse_Code.OK, RateLimitResponse_Code.OVER_LIMIT]);
  });
});
