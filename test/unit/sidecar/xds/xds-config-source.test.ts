// The sidecar's xDS config source against the operator's real ADS server (and a raw server for protocol edges).
import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createAdsServer, type AdsServer } from '../../../../operator/xds/ads-server.js';
import { createSnapshotCache, type SnapshotCache } from '../../../../operator/xds/snapshot-cache.js';
import { createXdsGrpcServer, type XdsGrpcServer } from '../../../../operator/xds/xds-grpc-server.js';
import { buildXdsResource } from '../../../../operator/ratelimit/resource-builder.js';
import {
  AggregatedDiscoveryServiceService,
  type DiscoveryRequest,
  type DiscoveryResponse,
} from '../../../../proto/gen/envoy/service/discovery/v3/discovery.js';
import type { RateLimitConfig as RateLimitConfigProto } from '../../../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';
import { systemClock } from '../../../../sidecar/clock.js';
import type { RateLimitConfig } from '../../../../sidecar/config/types.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { loadRateLimitConfig, xdsConfigToSource } from '../../../../sidecar/config/index.js';
import {
  createXdsConfigSource,
  type XdsConfigError,
  type XdsConfigSource,
  type XdsSourceSettings,
} from '../../../../sidecar/xds/index.js';

/** The sidecar's real loader, as the runner wires it. */
function load(configs: readonly RateLimitConfigProto[], mergeDomainConfig: boolean): RateLimitConfig {
  return loadRateLimitConfig(configs.map(xdsConfigToSource), { mergeDomainConfig });
}

function spec(domain: string, key = 'k') {
  return {
    domain,
    descriptors: [
      {
        key,
        value: '',
        rateLimit: { unit: 'minute' as const, requestsPerUnit: 5, unlimited: false, replaces: [] },
        shadowMode: false,
        detailedMetric: false,
        quotaMode: false,
        descriptors: [],
      },
    ],
  };
}

function settings(port: number, extra: Partial<XdsSourceSettings['xds']> = {}): XdsSourceSettings {
  return {
    mergeDomainConfig: false,
    xds: {
      nodeId: 'ns/pod-1',
      nodeMetadata: { namespace: 'team-a' },
      serverUrl: `127.0.0.1:${port}`,
      clientAdditionalHeaders: {},
      serverUseTls: false,
      clientTlsCert: '',
      clientTlsKey: '',
      serverTlsCaCert: '',
      serverTlsSan: '',
      maxMsgSizeInBytes: 0,
      backoffInitialIntervalMs: 20,
      backoffMaxIntervalMs: 100,
      backoffRandomFactor: 0.5,
      backoffJitter: false,
      ...extra,
    },
  };
}

class Events {
  configs: { domains: readonly string[]; names: readonly string[] }[] = [];
  errors: XdsConfigError[] = [];
  private waiters: (() => void)[] = [];
  push(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  async until(predicate: () => boolean): Promise<void> {
    while (!predicate()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

async function waitFor(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !predicate(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(predicate(), 'condition not reached').to.equal(true);
}

describe('sidecar xDS config source', () => {
  let cache: SnapshotCache;
  let ads: AdsServer;
  let server: XdsGrpcServer;
  let port: number;
  let source: XdsConfigSource | undefined;
  let events: Events;

  function startSource(s: XdsSourceSettings): void {
    source = createXdsConfigSource(s, {
      logger: silentLogger,
      load,
      onConfig: (config, names) => {
        events.configs.push({ domains: config.domains, names });
        events.push();
      },
      onError: (err) => {
        events.errors.push(err);
        events.push();
      },
    });
    source.start();
  }

  beforeEach(async () => {
    events = new Events();
    cache = createSnapshotCache({ globalNamespaces: [] });
    ads = createAdsServer({ cache, logger: silentLogger, clock: systemClock });
    server = createXdsGrpcServer(ads, undefined);
    port = await server.listen('127.0.0.1', 0);
  });

  afterEach(async () => {
    source?.stop();
    source = undefined;
    await server.shutdown(500);
  });

  it('loads the scope of its node metadata, reports it, and ACKs', async () => {
    cache.setResources([
      buildXdsResource('team-a', 'one', spec('d1')),
      buildXdsResource('team-b', 'other', spec('d2')),
    ]);
    startSource(settings(port));
    await events.until(() => events.configs.length === 1);
    expect(events.configs[0]).to.deep.equal({ domains: ['d1'], names: ['team-a/one'] });
    await waitFor(() => ads.sidecars()[0]?.ackedVersion === cache.snapshotFor('team-a').version);
    expect(ads.sidecars()[0]?.nodeId).to.equal('ns/pod-1');
  });

  it('NACKs a bad set with "<name>: <reason>", keeps the old config, and takes the next good one', async () => {
    cache.setResources([buildXdsResource('team-a', 'one', spec('d1'))]);
    startSource(settings(port));
    await events.until(() => events.configs.length === 1);
    cache.setResources([
      buildXdsResource('team-a', 'one', spec('d1')),
      buildXdsResource('team-a', 'bad', spec('d2', '')),
    ]);
    await events.until(() => events.errors.length === 1);
    expect(events.errors[0]?.code).to.equal('load_failed');
    expect(events.errors[0]?.message).to.equal('team-a/bad: descriptor has empty key');
    await waitFor(() => ads.sidecars()[0]?.rejection !== undefined);
    expect(ads.sidecars()[0]?.rejection?.resourceName).to.equal('team-a/bad');
    expect(events.configs).to.have.length(1);
    cache.setResources([
      buildXdsResource('team-a', 'one', spec('d1')),
      buildXdsResource('team-a', 'fixed', spec('d2')),
    ]);
    await events.until(() => events.configs.length === 2);
    expect(events.configs[1]?.names).to.deep.equal(['team-a/fixed', 'team-a/one']);
  });

  it('accepts an empty set (zero resources) as a valid config', async () => {
    startSource(settings(port));
    await events.until(() => events.configs.length === 1);
    expect(events.configs[0]).to.deep.equal({ domains: [], names: [] });
  });

  it('reconnects after the server goes away and resyncs from the new one', async () => {
    cache.setResources([buildXdsResource('team-a', 'one', spec('d1'))]);
    startSource(settings(port));
    await events.until(() => events.configs.length === 1);
    await server.shutdown(200);
    cache = createSnapshotCache({ globalNamespaces: [] });
    cache.setResources([buildXdsResource('team-a', 'one', spec('d1')), buildXdsResource('team-a', 'two', spec('d3'))]);
    ads = createAdsServer({ cache, logger: silentLogger, clock: systemClock });
    server = createXdsGrpcServer(ads, undefined);
    await server.listen('127.0.0.1', port);
    await events.until(() => events.configs.length === 2);
    expect(events.configs[1]?.domains).to.deep.equal(['d1', 'd3']);
    expect(events.errors).to.have.length(0);
  });

  it('sends additional headers and NACKs a resource of the wrong type as unmarshal_failed', async () => {
    const raw = new Server();
    const requests: DiscoveryRequest[] = [];
    const headers: string[] = [];
    raw.addService(AggregatedDiscoveryServiceService, {
      streamAggregatedResources: (call: ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>) => {
        headers.push(String(call.metadata.get('x-tenant')[0]), String(call.metadata.get('authorization')[0]));
        call.on('data', (r: DiscoveryRequest) => {
          requests.push(r);
          if (requests.length === 1) {
            call.write({
              versionInfo: 'v1',
              resources: [{ typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster', value: Buffer.alloc(0) }],
              canary: false,
              typeUrl: 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig',
              nonce: 'n1',
              controlPlane: undefined,
            });
          }
        });
        call.on('end', () => call.end());
      },
    });
    const rawPort = await new Promise<number>((resolve, reject) =>
      raw.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    try {
      startSource(
        settings(rawPort, {
          clientAdditionalHeaders: { 'X-Tenant': 'blue', authorization: 'Bearer t' },
          nodeMetadata: { namespace: 'x', features: 'week' },
        }),
      );
      await events.until(() => events.errors.length === 1);
      expect(events.errors[0]?.code).to.equal('unmarshal_failed');
      await waitFor(() => requests.length === 2);
      expect(headers).to.deep.equal(['blue', 'Bearer t']);
      expect(requests[0]?.node?.id).to.equal('ns/pod-1');
      expect(requests[0]?.node?.metadata).to.deep.equal({ namespace: 'x', features: 'week' });
      expect(requests[0]?.resourceNames).to.deep.equal([]);
      expect(requests[1]?.responseNonce).to.equal('n1');
      expect(requests[1]?.versionInfo, 'a NACK names the last ACKed version').to.equal('');
      expect(requests[1]?.errorDetail?.code).to.equal(0);
      expect(requests[1]?.errorDetail?.message).to.match(/^cannot unmarshal resource: unexpected resource type/);
      expect(requests[1]?.node?.id, 'every request carries the node').to.equal('ns/pod-1');
    } finally {
      source?.stop();
      raw.forceShutdown();
    }
  });

  it('applies XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: a larger response fails the stream instead of loading', async () => {
    cache.setResources([buildXdsResource('team-a', 'big', spec('a-domain-long-enough-to-pass-the-limit'))]);
    const reasons: string[] = [];
    let sawLimit: () => void = () => undefined;
    const limited = new Promise<void>((resolve) => (sawLimit = resolve));
    source = createXdsConfigSource(settings(port, { maxMsgSizeInBytes: 40 }), {
      logger: {
        ...silentLogger,
        warn: (message, fields) => {
          if (message === 'xds stream ended; reconnecting') {
            reasons.push(String(fields?.reason));
            sawLimit();
          }
        },
      },
      load,
      onConfig: () => events.configs.push({ domains: [], names: [] }),
      onError: (err) => events.errors.push(err),
    });
    source.start();
    await limited;
    expect(reasons[0]).to.match(/larger than max/i);
    expect(events.configs).to.deep.equal([]);
  });

  describe('over mTLS', () => {
    let dir: string;
    before(function () {
      this.timeout(30000);
      dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-xds-tls-'));
      const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
      run([
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'ca.key',
        '-out',
        'ca.crt',
        '-days',
        '1',
        '-subj',
        '/CN=test-ca',
      ]);
      for (const [name, san] of [
        ['server', 'DNS:operator.chorus.test'],
        ['client', 'DNS:sidecar.chorus.test'],
      ] as const) {
        run([
          'req',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          `${name}.key`,
          '-out',
          `${name}.csr`,
          '-subj',
          `/CN=${name}`,
        ]);
        const ext = path.join(dir, `${name}.ext`);
        execFileSync('sh', ['-c', `printf 'subjectAltName=${san}\\n' > ${ext}`]);
        run([
          'x509',
          '-req',
          '-in',
          `${name}.csr`,
          '-CA',
          'ca.crt',
          '-CAkey',
          'ca.key',
          '-CAcreateserial',
          '-out',
          `${name}.crt`,
          '-days',
          '1',
          '-extfile',
          ext,
        ]);
      }
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('verifies the server by the SAN override and presents the client certificate', async () => {
      await server.shutdown(200);
      server = createXdsGrpcServer(ads, {
        certFile: path.join(dir, 'server.crt'),
        keyFile: path.join(dir, 'server.key'),
        caFile: path.join(dir, 'ca.crt'),
        requireClientCert: true,
        refreshIntervalMs: 60_000,
      });
      port = await server.listen('127.0.0.1', 0);
      cache.setResources([buildXdsResource('team-a', 'tls', spec('secure'))]);
      startSource(
        settings(port, {
          serverUseTls: true,
          serverTlsCaCert: path.join(dir, 'ca.crt'),
          serverTlsSan: 'operator.chorus.test',
          clientTlsCert: path.join(dir, 'client.crt'),
          clientTlsKey: path.join(dir, 'client.key'),
        }),
      );
      await events.until(() => events.configs.length === 1);
      expect(events.configs[0]?.domains).to.deep.equal(['secure']);
    });
  });
});
