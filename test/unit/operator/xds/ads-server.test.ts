// The ADS server against real grpc-js clients on loopback: first-request state, ACK/NACK, parking, nonces, scopes.
import { Client as GrpcClient, credentials, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { expect } from 'chai';
import { createAdsServer, type AdsServer } from '../../../../operator/xds/ads-server.js';
import { createSnapshotCache, type SnapshotCache } from '../../../../operator/xds/snapshot-cache.js';
import { RATE_LIMIT_CONFIG_TYPE_URL } from '../../../../operator/xds/type-urls.js';
import { createXdsGrpcServer, type XdsGrpcServer } from '../../../../operator/xds/xds-grpc-server.js';
import { buildXdsResource } from '../../../../operator/ratelimit/resource-builder.js';
import {
  AggregatedDiscoveryServiceClient,
  type DiscoveryRequest,
  type DiscoveryResponse,
} from '../../../../proto/gen/envoy/service/discovery/v3/discovery.js';
import { RateLimitConfig } from '../../../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';
import { RateLimitConfigDiscoveryServiceClient } from '../../../../proto/gen/ratelimit/service/ratelimit/v3/rls_conf_ds.js';
import { systemClock } from '../../../../sidecar/clock.js';
import { silentLogger } from '../../../../sidecar/logger.js';

function resource(namespace: string, name: string, domain: string, rpu = 10) {
  return buildXdsResource(namespace, name, {
    domain,
    descriptors: [
      {
        key: 'k',
        value: '',
        rateLimit: { unit: 'second', requestsPerUnit: rpu, unlimited: false, replaces: [] },
        shadowMode: false,
        detailedMetric: false,
        quotaMode: false,
        descriptors: [],
      },
    ],
  });
}

/** A scripted ADS client: queues responses, sends requests shaped like the ratelimit sidecar's. */
class TestClient {
  private readonly queue: DiscoveryResponse[] = [];
  private waiter: ((r: DiscoveryResponse) => void) | undefined;
  readonly ended: Promise<ServiceError | undefined>;
  constructor(
    readonly stream: ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>,
    private readonly nodeId: string,
    private readonly metadata: Record<string, string> = {},
  ) {
    stream.on('data', (r: DiscoveryResponse) => {
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = undefined;
        w(r);
      } else this.queue.push(r);
    });
    this.ended = new Promise((resolve) => {
      stream.on('error', (e: ServiceError) => resolve(e));
      stream.on('end', () => resolve(undefined));
    });
  }
  send(fields: Partial<DiscoveryRequest>): void {
    this.stream.write({
      versionInfo: '',
      node: {
        id: this.nodeId,
        cluster: '',
        metadata: this.metadata,
        locality: undefined,
        userAgentName: '',
        clientFeatures: [],
      },
      resourceNames: [],
      typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
      responseNonce: '',
      errorDetail: undefined,
      ...fields,
    });
  }
  ack(r: DiscoveryResponse): void {
    this.send({ versionInfo: r.versionInfo, responseNonce: r.nonce });
  }
  nack(lastAcked: string, r: DiscoveryResponse, message: string): void {
    this.send({ versionInfo: lastAcked, responseNonce: r.nonce, errorDetail: { code: 0, message, details: [] } });
  }
  next(): Promise<DiscoveryResponse> {
    const r = this.queue.shift();
    if (r) return Promise.resolve(r);
    return new Promise((resolve) => (this.waiter = resolve));
  }
  pending(): number {
    return this.queue.length;
  }
  close(): void {
    this.stream.cancel();
  }
}

function names(r: DiscoveryResponse): string[] {
  return r.resources.map((a) => RateLimitConfig.decode(a.value).name);
}

/** Resolves after the server has processed everything sent before (the server answers requests in order). */
async function until(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !predicate(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(predicate(), 'condition not reached').to.equal(true);
}

describe('ADS server', () => {
  let cache: SnapshotCache;
  let ads: AdsServer;
  let server: XdsGrpcServer;
  let port: number;
  let nackEvents: string[];
  let changes: string[];
  const clients: TestClient[] = [];
  let adsClient: InstanceType<typeof AggregatedDiscoveryServiceClient>;

  function connect(nodeId: string, metadata: Record<string, string> = {}): TestClient {
    const c = new TestClient(adsClient.streamAggregatedResources(), nodeId, metadata);
    clients.push(c);
    return c;
  }

  beforeEach(async () => {
    cache = createSnapshotCache({ globalNamespaces: ['global'] });
    nackEvents = [];
    changes = [];
    ads = createAdsServer({
      onSidecarsChanged: (change) => changes.push(change),
      cache,
      logger: silentLogger,
      clock: systemClock,
      controlPlaneId: 'op-0',
      onNack: (_s, r) => nackEvents.push(`${r.resourceName ?? '?'}|${r.message}`),
    });
    server = createXdsGrpcServer(ads, undefined);
    port = await server.listen('127.0.0.1', 0);
    adsClient = new AggregatedDiscoveryServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    adsClient.close();
    await server.shutdown(1000);
  });

  it('answers the first request at once with the full set, whatever version and nonce it claims', async () => {
    cache.setResources([resource('a', 'one', 'd1'), resource('a', 'two', 'd2'), resource('b', 'x', 'd3')]);
    const c = connect('node-1', { namespace: 'a' });
    c.send({ versionInfo: 'stale-version', responseNonce: '42' });
    const r = await c.next();
    expect(names(r)).to.deep.equal(['a/one', 'a/two']);
    expect(r.typeUrl).to.equal(RATE_LIMIT_CONFIG_TYPE_URL);
    expect(r.versionInfo).to.equal(cache.snapshotFor('a').version);
    expect(r.nonce).to.equal('1');
    expect(r.controlPlane?.identifier).to.equal('op-0');
    await until(() => ads.sidecars().length === 1);
    expect(ads.sidecars()[0]?.ackedVersion, 'the first request is not an ACK').to.equal(undefined);
    expect(ads.sidecars()[0]?.claimedVersion).to.equal('stale-version');
  });

  it('tells apart a sidecar joining or leaving (features may change) from an ACK (they cannot)', async () => {
    cache.setResources([resource('a', 'one', 'd1')]);
    const c = connect('n', { namespace: 'a' });
    c.send({});
    c.ack(await c.next());
    await until(() => changes.length === 2);
    c.close();
    await until(() => changes.length === 3);
    expect(changes).to.deep.equal(['joined', 'answered', 'left']);
  });

  it('gives an unscoped node the global set, and a scoped node its namespace plus the globals', async () => {
    cache.setResources([resource('global', 'g', 'dg'), resource('a', 'one', 'd1')]);
    const unscoped = connect('n0');
    unscoped.send({});
    expect(names(await unscoped.next())).to.deep.equal(['global/g']);
    const scoped = connect('n1', { namespace: 'a' });
    scoped.send({});
    expect(names(await scoped.next())).to.deep.equal(['a/one', 'global/g']);
    const empty = connect('n2', { namespace: 'nothing-here' });
    empty.send({});
    const r = await empty.next();
    expect(names(r)).to.deep.equal(['global/g']);
  });

  it('sends a new snapshot after an ACK when the content changes, never one already ACKed', async () => {
    cache.setResources([resource('a', 'one', 'd1')]);
    const c = connect('n', { namespace: 'a' });
    c.send({});
    const first = await c.next();
    c.ack(first);
    await until(() => ads.sidecars()[0]?.ackedVersion === first.versionInfo);
    cache.setResources([resource('a', 'one', 'd1')]); // same content: same version, nothing to send
    cache.setResources([resource('a', 'one', 'd1', 20)]);
    const second = await c.next();
    expect(second.versionInfo).to.not.equal(first.versionInfo);
    expect(second.nonce).to.equal('2');
    expect(c.pending()).to.equal(0);
  });

  it('keeps one response in flight and sends only the latest state after the ACK', async () => {
    cache.setResources([resource('a', 'one', 'd1')]);
    const c = connect('n', { namespace: 'a' });
    c.send({});
    const first = await c.next();
    cache.setResources([resource('a', 'one', 'd1', 2)]);
    cache.setResources([resource('a', 'one', 'd1', 3)]);
    c.ack(first);
    const second = await c.next();
    expect(second.versionInfo).to.equal(cache.snapshotFor('a').version);
    expect(RateLimitConfig.decode(second.resources[0]!.value).descriptors[0]?.rateLimit?.requestsPerUnit).to.equal(3);
  });

  it('parks on a NACK (no resend loop), attributes it to the named resource, and resumes on change', async () => {
    cache.setResources([resource('a', 'good', 'd1'), resource('a', 'bad', 'd2')]);
    const c = connect('n', { namespace: 'a' });
    c.send({});
    const first = await c.next();
    c.nack('', first, 'a/bad: invalid rate limit unit');
    await until(() => ads.sidecars()[0]?.rejection !== undefined);
    expect(nackEvents).to.deep.equal(['a/bad|a/bad: invalid rate limit unit']);
    const rejection = ads.sidecars()[0]?.rejection;
    expect(rejection?.version).to.equal(first.versionInfo);
    expect(rejection?.resourceName).to.equal('a/bad');
    // An unrelated change that leaves this scope's version alone must not trigger the rejected snapshot again.
    cache.setResources([resource('a', 'good', 'd1'), resource('a', 'bad', 'd2'), resource('b', 'x', 'd9')]);
    cache.setResources([resource('a', 'good', 'd1')]);
    const second = await c.next();
    expect(names(second), 'the next response is the fixed snapshot, not a resend').to.deep.equal(['a/good']);
    c.ack(second);
    await until(() => ads.sidecars()[0]?.rejection === undefined);
  });

  it('keeps NACK history per node id across a reconnect that claims the rejected version', async () => {
    cache.setResources([resource('a', 'bad', 'd2')]);
    const c = connect('shared', { namespace: 'a' });
    c.send({});
    const first = await c.next();
    c.nack('', first, 'a/bad: boom');
    await until(() => ads.lastRejectionOf('shared') !== undefined);
    c.close();
    await until(() => ads.sidecars().length === 0);
    const again = connect('shared', { namespace: 'a' });
    again.send({ versionInfo: first.versionInfo, responseNonce: first.nonce });
    const r = await again.next();
    expect(r.versionInfo, 'a new stream always gets current state').to.equal(first.versionInfo);
    await until(() => ads.sidecars().length === 1);
    expect(ads.sidecars()[0]?.rejection?.message).to.equal('a/bad: boom');
  });

  it('ignores requests with a stale nonce', async () => {
    cache.setResources([resource('a', 'one', 'd1')]);
    const c = connect('n', { namespace: 'a' });
    c.send({});
    const first = await c.next();
    c.send({ versionInfo: 'x', responseNonce: '999', errorDetail: { code: 0, message: 'a/one: stale', details: [] } });
    c.ack(first);
    await until(() => ads.sidecars()[0]?.ackedVersion === first.versionInfo);
    expect(nackEvents).to.deep.equal([]);
  });

  it('serves several sidecars that share one node id as separate sidecars', async () => {
    cache.setResources([resource('a', 'one', 'd1')]);
    const c1 = connect('envoy-ratelimit', { namespace: 'a' });
    const c2 = connect('envoy-ratelimit', { namespace: 'a' });
    c1.send({});
    c2.send({});
    const [r1, r2] = await Promise.all([c1.next(), c2.next()]);
    c1.ack(r1);
    await until(() => ads.sidecars().filter((s) => s.ackedVersion !== undefined).length === 1);
    expect(ads.sidecars().map((s) => s.nodeId)).to.deep.equal(['envoy-ratelimit', 'envoy-ratelimit']);
    cache.setResources([resource('a', 'one', 'd1', 5)]);
    expect((await c1.next()).versionInfo).to.not.equal(r1.versionInfo);
    c2.ack(r2);
    expect((await c2.next()).versionInfo).to.not.equal(r2.versionInfo);
  });

  it('closes a stream with INVALID_ARGUMENT when type_url is empty', async () => {
    const c = connect('n');
    c.send({ typeUrl: '' });
    const err = await c.ended;
    expect(err?.code).to.equal(3);
  });

  it('does not answer an unknown type URL', async () => {
    cache.setResources([resource('global', 'g', 'd')]);
    const c = connect('n');
    c.send({ typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster' });
    c.send({});
    const r = await c.next();
    expect(r.typeUrl, 'the only answer is to the known type').to.equal(RATE_LIMIT_CONFIG_TYPE_URL);
    expect(r.nonce).to.equal('1');
  });

  it('serves StreamRlsConfigs with the same handler, defaulting the type URL', async () => {
    cache.setResources([resource('global', 'g', 'd')]);
    const rls = new RateLimitConfigDiscoveryServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
    const c = new TestClient(rls.streamRlsConfigs(), 'n');
    clients.push(c);
    c.send({ typeUrl: '' });
    expect(names(await c.next())).to.deep.equal(['global/g']);
    c.close();
    rls.close();
  });

  it('answers FetchRlsConfigs with the scope of the node, and DeltaAggregatedResources with UNIMPLEMENTED', async () => {
    cache.setResources([resource('a', 'one', 'd1'), resource('b', 'two', 'd2')]);
    const rls = new RateLimitConfigDiscoveryServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
    const fetched = await new Promise<DiscoveryResponse>((resolve, reject) =>
      rls.fetchRlsConfigs(
        {
          versionInfo: '',
          node: {
            id: 'n',
            cluster: '',
            metadata: { namespace: 'b' },
            locality: undefined,
            userAgentName: '',
            clientFeatures: [],
          },
          resourceNames: [],
          typeUrl: '',
          responseNonce: '',
          errorDetail: undefined,
        },
        (err, res) => (err ? reject(err) : resolve(res)),
      ),
    );
    rls.close();
    expect(names(fetched)).to.deep.equal(['b/two']);
    const raw = new GrpcClient(`127.0.0.1:${port}`, credentials.createInsecure());
    const delta = raw.makeBidiStreamRequest(
      '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources',
      (b: Buffer) => b,
      (b: Buffer) => b,
    );
    const code = await new Promise<number>((resolve) => delta.on('error', (e: ServiceError) => resolve(e.code)));
    delta.write(Buffer.alloc(0));
    raw.close();
    expect(code).to.equal(12);
  });

  it('keeps serving after closeAll when carried by a new gRPC server (leadership regained)', async () => {
    cache.setResources([resource('a', 'one', 'd1')]);
    const first = connect('n', { namespace: 'a' });
    first.send({});
    await first.next();
    await server.shutdown(200);
    expect((await first.ended)?.code).to.equal(14);
    server = createXdsGrpcServer(ads, undefined);
    port = await server.listen('127.0.0.1', 0);
    adsClient.close();
    adsClient = new AggregatedDiscoveryServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
    const again = connect('n', { namespace: 'a' });
    again.send({});
    again.ack(await again.next());
    await until(() => ads.sidecars()[0]?.ackedVersion !== undefined);
    cache.setResources([resource('a', 'one', 'd1', 99)]);
    expect(
      RateLimitConfig.decode((await again.next()).resources[0]!.value).descriptors[0]?.rateLimit?.requestsPerUnit,
    ).to.equal(99);
  });
});
