// MEMCACHE_TLS* against a real memcached with TLS (-Z): extra CA, unknown CA, hostname check and its skip, mTLS.
import { expect } from 'chai';
import path from 'node:path';
import {
  connectMemcacheBackend,
  type MemcacheBackend,
  type MemcacheConnectionSettings,
} from '../../../../sidecar/limiter/backend-memcache.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { startMemcachedServer, type MemcachedServer } from '../../../support/memcached-server.js';
import { makeTestCerts, type TestCerts } from '../backends/tls-certs.js';

const MULTIGET_ERROR = 'ratelimit.memcache.multiget.__code=error';

describe('memcache backend over TLS (memcached -Z)', () => {
  let good: TestCerts;
  let otherName: TestCerts;
  let plain: MemcachedServer;
  let wrongName: MemcachedServer;
  let mutual: MemcachedServer;

  const tlsArgs = (certs: TestCerts, extra = ''): string[] => [
    '-Z',
    '-o',
    `ssl_chain_cert=${certs.serverCertFile},ssl_key=${certs.serverKeyFile}${extra}`,
  ];

  before(async () => {
    good = makeTestCerts('IP:127.0.0.1');
    otherName = makeTestCerts('DNS:elsewhere.example');
    [plain, wrongName, mutual] = await Promise.all([
      startMemcachedServer(tlsArgs(good)),
      startMemcachedServer(tlsArgs(otherName)),
      // ssl_verify_mode 2: a client certificate signed by ssl_ca_cert is required.
      startMemcachedServer(tlsArgs(good, `,ssl_ca_cert=${good.caFile},ssl_verify_mode=2`)),
    ]);
  });
  after(async () => {
    await Promise.all([plain, wrongName, mutual].map((s) => s?.stop()));
    good?.dispose();
    otherName?.dispose();
  });

  const settings = (
    server: MemcachedServer,
    fields: Partial<MemcacheConnectionSettings>,
  ): MemcacheConnectionSettings => ({
    hostPort: [server.address],
    srv: '',
    srvRefreshMs: 0,
    maxIdleConns: 2,
    tls: true,
    tlsClientCert: '',
    tlsClientKey: '',
    tlsCaCert: '',
    tlsSkipHostnameVerification: false,
    ...fields,
  });

  /** Two increments of one fresh key: 2 when both reads reached the server, 1 when the reads failed open. */
  async function secondCount(s: MemcacheConnectionSettings): Promise<{ count: number; readErrors: number }> {
    const store = new StatsStore();
    const backend: MemcacheBackend = await connectMemcacheBackend({
      settings: s,
      stats: store,
      logger: silentLogger,
      timeoutMs: 3000,
    });
    try {
      const key = `tls_${Date.now()}_${Math.random().toString(36).slice(2)}`;
      const op = { key, hits: 1, ttlSeconds: 60, perSecond: false };
      await backend.increment([op]);
      await backend.flush();
      const [count] = await backend.increment([op]);
      await backend.flush();
      return { count: count!, readErrors: store.counter(MULTIGET_ERROR).value() };
    } finally {
      await backend.close();
    }
  }

  it('trusts MEMCACHE_TLS_CACERT in addition to the system roots', async () => {
    expect(await secondCount(settings(plain, { tlsCaCert: good.caFile }))).to.deep.equal({ count: 2, readErrors: 0 });
  });

  it('an unknown CA fails open (every read errors)', async () => {
    expect(await secondCount(settings(plain, {}))).to.deep.equal({ count: 1, readErrors: 2 });
  });

  it('checks the server name unless MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION', async () => {
    const ca = { tlsCaCert: otherName.caFile };
    expect(await secondCount(settings(wrongName, ca))).to.deep.equal({ count: 1, readErrors: 2 });
    expect(await secondCount(settings(wrongName, { ...ca, tlsSkipHostnameVerification: true }))).to.deep.equal({
      count: 2,
      readErrors: 0,
    });
  });

  it('presents MEMCACHE_TLS_CLIENT_CERT/KEY to a server that requires one (mTLS)', async () => {
    const ca = { tlsCaCert: good.caFile };
    expect((await secondCount(settings(mutual, ca))).readErrors).to.equal(2);
    const client = {
      ...ca,
      tlsClientCert: path.join(good.dir, 'client.crt'),
      tlsClientKey: path.join(good.dir, 'client.key'),
    };
    expect(await secondCount(settings(mutual, client))).to.deep.equal({ count: 2, readErrors: 0 });
  });

  it('an unreadable certificate file is a startup error naming the variable', async () => {
    let caught: unknown;
    await connectMemcacheBackend({
      settings: settings(plain, { tlsCaCert: '/nonexistent/ca.pem' }),
      stats: new StatsStore(),
      logger: silentLogger,
    }).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(Error).with.property('message').that.contains('MEMCACHE_TLS_CACERT');
  });
});
