// The Redis backend over TLS against a TLS-only redis-server: extra CA, mTLS, hostname verification.
import { expect } from 'chai';
import { BackendError } from '../../../../sidecar/errors.js';
import { connectRedisBackend, type RedisClientOptions } from '../../../../sidecar/limiter/backend-redis.js';
import type { RedisTlsOptions } from '../../../../sidecar/limiter/redis-tls.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { freePort } from '../../../support/ports.js';
import { startRedisServer, type RedisServer } from '../../../support/redis-server.js';
import { makeTestCerts, type TestCerts } from './tls-certs.js';

const op = { key: 'tls:key', hits: 1, ttlSeconds: 60, perSecond: false };

async function connect(port: number, tls: RedisTlsOptions, maxElapsedMs = 0) {
  const main: RedisClientOptions = {
    type: 'single',
    socketType: 'tcp',
    url: `127.0.0.1:${port}`,
    poolSize: 1,
    auth: '',
    timeoutMs: 2000,
    tls,
  };
  return connectRedisBackend({
    main,
    startup: { initialIntervalMs: 20, maxIntervalMs: 50, maxElapsedMs },
    healthCheckActiveConnection: false,
    stats: new StatsStore(),
    logger: silentLogger,
  });
}

/** A redis-server that only speaks TLS (plain port 0), on a free TLS port. */
async function tlsRedis(certs: TestCerts, requireClientCert: boolean): Promise<{ server: RedisServer; port: number }> {
  const port = await freePort();
  const server = await startRedisServer([
    '--tls-port',
    String(port),
    '--tls-cert-file',
    certs.serverCertFile,
    '--tls-key-file',
    certs.serverKeyFile,
    '--tls-ca-cert-file',
    certs.caFile,
    '--tls-auth-clients',
    requireClientCert ? 'yes' : 'no',
  ]);
  return { server, port };
}

describe('redis backend over TLS', function () {
  this.timeout(20000);

  describe('server certificate for 127.0.0.1', () => {
    let certs: TestCerts;
    let plain: { server: RedisServer; port: number };
    let mutual: { server: RedisServer; port: number };
    before(async () => {
      certs = makeTestCerts('IP:127.0.0.1');
      plain = await tlsRedis(certs, false);
      mutual = await tlsRedis(certs, true);
    });
    after(async () => {
      await plain?.server.stop();
      await mutual?.server.stop();
      certs?.dispose();
    });

    it('connects with the extra CA and counts', async () => {
      const backend = await connect(plain.port, { caPem: certs.caPem, skipHostnameVerification: false });
      try {
        expect(await backend.increment([op])).to.deep.equal([1]);
      } finally {
        await backend.close();
      }
    });

    it('rejects an unknown CA at startup (chain verified)', async () => {
      const err = await connect(plain.port, { skipHostnameVerification: true }, 150).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err).to.be.instanceOf(BackendError);
      expect(err!.message).to.match(
        /^timed out waiting for Redis connection: .*(self.signed|unable to verify|certificate)/i,
      );
    });

    it('presents the client certificate for mTLS (tls-auth-clients yes)', async () => {
      const backend = await connect(mutual.port, {
        caPem: certs.caPem,
        certPem: certs.clientCertPem,
        keyPem: certs.clientKeyPem,
        skipHostnameVerification: false,
      });
      try {
        expect(await backend.increment([op])).to.deep.equal([1]);
      } finally {
        await backend.close();
      }
      const without = await connect(mutual.port, { caPem: certs.caPem, skipHostnameVerification: false }, 150).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(without).to.be.instanceOf(BackendError);
    });
  });

  it('REDIS_TLS_SKIP_HOSTNAME_VERIFICATION accepts a valid chain for another name, and only then', async () => {
    const certs = makeTestCerts('DNS:elsewhere.example');
    const { server, port } = await tlsRedis(certs, false);
    try {
      const strict = await connect(port, { caPem: certs.caPem, skipHostnameVerification: false }, 150).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(strict).to.be.instanceOf(BackendError);
      expect(strict!.message).to.match(/altnames|hostname|IP/i);
      const backend = await connect(port, { caPem: certs.caPem, skipHostnameVerification: true });
      try {
        expect(await backend.increment([op])).to.deep.equal([1]);
      } finally {
        await backend.close();
      }
    } finally {
      await server.stop();
      certs.dispose();
    }
  });
});
