// GRPC_MAX_CONNECTION_AGE: the server ends old connections with GOAWAY, and clients reconnect and keep working.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { rmSync } from 'node:fs';
import {
  RateLimitServiceClient,
  type RateLimitResponse,
} from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { startRateLimitServer, type RunningRateLimitServer } from '../../../../sidecar/runner.js';
import { loadSettings } from '../../../../sidecar/settings/settings.js';
import { makeSidecarConfigDir, quietRunnerDeps, sidecarTestEnv } from '../../../support/sidecar.js';

describe('gRPC max connection age', function () {
  this.timeout(60_000);
  let dir: string;
  let running: RunningRateLimitServer | undefined;

  before(async () => {
    dir = makeSidecarConfigDir('domain: test\ndescriptors:\n  - key: free\n');
    running = await startRateLimitServer(
      loadSettings(sidecarTestEnv(dir, { GRPC_MAX_CONNECTION_AGE: '1s', GRPC_MAX_CONNECTION_AGE_GRACE: '500ms' })),
      quietRunnerDeps(),
    );
  });

  after(async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes an idle-but-old connection and the client reconnects for the next call', async () => {
    const client = new RateLimitServiceClient(`127.0.0.1:${running?.grpcPort}`, grpc.credentials.createInsecure());
    const call = (): Promise<RateLimitResponse> =>
      new Promise((resolve, reject) =>
        client.shouldRateLimit(
          {
            domain: 'test',
            descriptors: [{ entries: [{ key: 'free', value: 'x' }], limit: undefined, hitsAddend: undefined }],
            hitsAddend: 1,
          },
          new grpc.Metadata(),
          { deadline: Date.now() + 5000 },
          (err, res) => (err !== null ? reject(err) : resolve(res)),
        ),
      );
    try {
      await call();
      const channel = client.getChannel();
      expect(channel.getConnectivityState(false)).to.equal(grpc.connectivityState.READY);
      // The GOAWAY after ~1 s (±10 % jitter) drops the channel out of READY; wait for that transition.
      await new Promise<void>((resolve, reject) => {
        channel.watchConnectivityState(grpc.connectivityState.READY, Date.now() + 10_000, (err) =>
          err ? reject(err) : resolve(),
        );
      });
      expect(channel.getConnectivityState(false)).to.not.equal(grpc.connectivityState.READY);
      await call();
    } finally {
      client.close();
    }
  });
});
