// A server certificate replaced on disk is picked up by the running gRPC listener, without a restart.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  RateLimitServiceClient,
  type RateLimitResponse,
} from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { startRateLimitServer, type RunningRateLimitServer } from '../../../../sidecar/runner.js';
import { loadSettings } from '../../../../sidecar/settings/settings.js';
import { makeSidecarConfigDir, quietRunnerDeps, sidecarTestEnv } from '../../../support/sidecar.js';
import { makeTestCerts, type TestCerts } from '../backends/tls-certs.js';

describe('gRPC server certificate rotation', function () {
  this.timeout(60_000);
  let dir: string;
  let oldCerts: TestCerts;
  let newCerts: TestCerts;
  let running: RunningRateLimitServer | undefined;

  const call = (caPem: Buffer): Promise<RateLimitResponse> => {
    const client = new RateLimitServiceClient(`127.0.0.1:${running?.grpcPort}`, grpc.credentials.createSsl(caPem));
    return new Promise<RateLimitResponse>((resolve, reject) => {
      client.shouldRateLimit(
        {
          domain: 'test',
          descriptors: [{ entries: [{ key: 'free', value: 'x' }], limit: undefined, hitsAddend: undefined }],
          hitsAddend: 1,
        },
        new grpc.Metadata(),
        { deadline: Date.now() + 3000 },
        (err, res) => (err !== null ? reject(err) : resolve(res)),
      );
    }).finally(() => client.close());
  };

  before(async () => {
    oldCerts = makeTestCerts('IP:127.0.0.1');
    newCerts = makeTestCerts('IP:127.0.0.1');
    dir = makeSidecarConfigDir('domain: test\ndescriptors:\n  - key: free\n');
    copyFileSync(oldCerts.serverCertFile, path.join(dir, 'server.crt'));
    copyFileSync(oldCerts.serverKeyFile, path.join(dir, 'server.key'));
    running = await startRateLimitServer(
      loadSettings(
        sidecarTestEnv(dir, {
          GRPC_SERVER_USE_TLS: 'true',
          GRPC_SERVER_TLS_CERT: path.join(dir, 'server.crt'),
          GRPC_SERVER_TLS_KEY: path.join(dir, 'server.key'),
        }),
      ),
      quietRunnerDeps(),
    );
  });

  after(async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
    oldCerts.dispose();
    newCerts.dispose();
  });

  it('serves the new certificate to new connections after the files change', async () => {
    const oldCa = readFileSync(oldCerts.caFile);
    const newCa = readFileSync(newCerts.caFile);
    await call(oldCa);
    await call(newCa).then(
      () => expect.fail('a client trusting only the new CA must be refused before the rotation'),
      (err: grpc.ServiceError) => expect(err.code).to.equal(grpc.status.UNAVAILABLE),
    );

    copyFileSync(newCerts.serverKeyFile, path.join(dir, 'server.key'));
    copyFileSync(newCerts.serverCertFile, path.join(dir, 'server.crt'));
    // The listener re-reads the files periodically; poll until the new chain is served (bounded by mocha's timeout).
    for (;;) {
      const ok = await call(newCa).then(
        () => true,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    await call(oldCa).then(
      () => expect.fail('the old certificate must no longer be served'),
      (err: grpc.ServiceError) => expect(err.code).to.equal(grpc.status.UNAVAILABLE),
    );
  });
});
