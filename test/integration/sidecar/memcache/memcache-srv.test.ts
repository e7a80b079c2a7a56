// MEMCACHE_SRV against a local DNS server: startup lookup, sorted nodes, a record change picked up while running.
import { expect } from 'chai';
import { Resolver } from 'node:dns/promises';
import { crc32 } from 'node:zlib';
import type { CounterOp } from '../../../../sidecar/limiter/backend.js';
import {
  connectMemcacheBackend,
  type MemcacheBackend,
  type MemcacheConnectionSettings,
} from '../../../../sidecar/limiter/backend-memcache.js';
import { MemcacheError } from '../../../../sidecar/limiter/memcache-error.js';
import type { SrvLookup } from '../../../../sidecar/limiter/memcache-srv.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { startDnsServer, type DnsServer } from '../../../support/dns-server.js';
import { startMemcachedServer, type MemcachedServer } from '../../../support/memcached-server.js';
import { readDirect } from './memcache-direct.js';

const SRV = '_memcache._tcp.chorus.test';
const TIMEOUT_MS = 3000;

const srvSettings = (srv: string, srvRefreshMs: number): MemcacheConnectionSettings => ({
  hostPort: [],
  srv,
  srvRefreshMs,
  maxIdleConns: 2,
  tls: false,
  tlsClientCert: '',
  tlsClientKey: '',
  tlsCaCert: '',
  tlsSkipHostnameVerification: false,
});

const op = (key: string, hits = 1): CounterOp => ({ key, hits, ttlSeconds: 60, perSecond: false });

/** Polls `check` every 50 ms until it holds, or fails after 10 s (a bound, not a duration assertion). */
async function eventually(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('memcache backend with MEMCACHE_SRV (local DNS server)', () => {
  let dns: DnsServer;
  let nodes: MemcachedServer[];
  let lookup: SrvLookup;
  let backend: MemcacheBackend | undefined;

  before(async () => {
    [dns, ...nodes] = await Promise.all([
      startDnsServer(),
      startMemcachedServer(),
      startMemcachedServer(),
      startMemcachedServer(),
    ]);
    const resolver = new Resolver({ timeout: 1000, tries: 2 });
    resolver.setServers([dns.address]);
    lookup = (name) => resolver.resolveSrv(name);
  });
  after(async () => {
    await Promise.all([dns.stop(), ...nodes.map((n) => n.stop())]);
  });
  afterEach(async () => {
    await backend?.close();
    backend = undefined;
  });

  const record = (
    n: MemcachedServer,
    priority = 10,
  ): { priority: number; weight: number; port: number; target: string } => ({
    priority,
    weight: 5,
    port: n.port,
    target: '127.0.0.1',
  });
  const goName = (n: MemcachedServer): string => `127.0.0.1.:${n.port}`;

  it('resolves the SRV name at startup into the sorted Go-style list and stores keys on the crc32 node', async () => {
    // Answer order and priorities must not matter: upstream sorts the host:port strings.
    dns.setSrv(SRV, [record(nodes[1]!, 1), record(nodes[0]!, 20)]);
    backend = await connectMemcacheBackend({
      settings: srvSettings(SRV, 0),
      stats: new StatsStore(),
      logger: silentLogger,
      timeoutMs: TIMEOUT_MS,
      lookupSrv: lookup,
    });
    const expected = [goName(nodes[0]!), goName(nodes[1]!)].sort();
    expect(backend.servers()).to.deep.equal(expected);
    const keys = Array.from({ length: 10 }, (_, i) => `srv_start_${Date.now()}_${i}`);
    await backend.increment(keys.map((k) => op(k, 2)));
    await backend.flush();
    for (const key of keys) {
      const owner = expected[crc32(Buffer.from(key)) % 2]!;
      for (const n of nodes.slice(0, 2)) {
        const stored = await readDirect(n.port, key);
        expect(stored?.value, `${key} on ${n.port}`).to.equal(goName(n) === owner ? '2' : undefined);
      }
    }
  });

  it('picks up a changed record while running (MEMCACHE_SRV_REFRESH) and routes keys to the new node', async () => {
    dns.setSrv(SRV, [record(nodes[0]!)]);
    backend = await connectMemcacheBackend({
      settings: srvSettings(SRV, 100),
      stats: new StatsStore(),
      logger: silentLogger,
      timeoutMs: TIMEOUT_MS,
      lookupSrv: lookup,
    });
    expect(backend.servers()).to.deep.equal([goName(nodes[0]!)]);

    dns.setSrv(SRV, [record(nodes[2]!)]);
    await eventually(() => backend!.servers()[0] === goName(nodes[2]!), 'the SRV change');
    const key = `srv_moved_${Date.now()}`;
    await backend.increment([op(key, 3)]);
    await backend.flush();
    expect((await readDirect(nodes[2]!.port, key))?.value).to.equal('3');
    expect(await readDirect(nodes[0]!.port, key)).to.equal(undefined);

    // A failing lookup (NXDOMAIN) keeps the current list.
    dns.setSrv(SRV, []);
    const queries = dns.queries();
    await eventually(() => dns.queries() >= queries + 3, 'three refresh lookups');
    expect(backend.servers()).to.deep.equal([goName(nodes[2]!)]);

    dns.setSrv(SRV, [record(nodes[2]!), record(nodes[1]!)]);
    await eventually(() => backend!.servers().length === 2, 'the second node');
    expect(backend.servers()).to.deep.equal([goName(nodes[1]!), goName(nodes[2]!)].sort());
  });

  it('a startup lookup that fails is a startup error (code srv), as upstream refuses to start', async () => {
    let caught: unknown;
    await connectMemcacheBackend({
      settings: srvSettings('_memcache._tcp.unknown.test', 0),
      stats: new StatsStore(),
      logger: silentLogger,
      lookupSrv: lookup,
    }).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(MemcacheError).with.property('code', 'srv');
  });
});
