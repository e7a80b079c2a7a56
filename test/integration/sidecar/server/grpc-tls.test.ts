// gRPC over TLS and mTLS with certificates made by openssl in the test: SAN check, plaintext refused, CLI flags.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  RateLimitResponse_Code,
  RateLimitServiceClient,
  type RateLimitResponse,
} from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { defaultRunnerDeps, startRateLimitServer, type RunningRateLimitServer } from '../../../../sidecar/runner.js';
import { SettingsError } from '../../../../sidecar/settings/settings-error.js';
import { loadSettings } from '../../../../sidecar/settings/settings.js';
import { requireBinary } from '../../../support/process.js';

const CONFIG = 'domain: test\ndescriptors:\n  - key: free\n';

/** A CA, a server cert for localhost/127.0.0.1, and client certs for `client.example` and `other.example`. */
function makeCertificates(dir: string): void {
  const openssl = requireBinary('openssl', 'apt-get install -y openssl');
  const run = (args: string[]): void => {
    execFileSync(openssl, args, { cwd: dir, stdio: 'ignore' });
  };
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
    '2',
    '-subj',
    '/CN=test-ca',
  ]);
  const leaf = (name: string, ext: string): void => {
    writeFileSync(path.join(dir, `${name}.ext`), ext);
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
      '2',
      '-extfile',
      `${name}.ext`,
    ]);
  };
  leaf('server', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  leaf('client', 'subjectAltName=DNS:client.example\nextendedKeyUsage=clientAuth\n');
  leaf('other', 'subjectAltName=DNS:other.example\nextendedKeyUsage=clientAuth\n');
}

describe('gRPC TLS and mTLS', function () {
  this.timeout(60_000);
  let dir: string;
  let running: RunningRateLimitServer;

  const file = (name: string): Buffer => readFileSync(path.join(dir, name));
  const call = (creds: grpc.ChannelCredentials): Promise<RateLimitResponse> => {
    const client = new RateLimitServiceClient(`localhost:${running.grpcPort}`, creds);
    return new Promise<RateLimitResponse>((resolve, reject) => {
      client.shouldRateLimit(
        {
          domain: 'test',
          descriptors: [{ entries: [{ key: 'free', value: 'x' }], limit: undefined, hitsAddend: undefined }],
          hitsAddend: 1,
        },
        new grpc.Metadata(),
        { deadline: Date.now() + 5000 },
        (err, res) => (err !== null ? reject(err) : resolve(res)),
      );
    }).finally(() => client.close());
  };

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-tls-'));
    makeCertificates(dir);
    mkdirSync(path.join(dir, 'config'));
    writeFileSync(path.join(dir, 'config', 'c.yaml'), CONFIG);
    running = await startRateLimitServer(
      loadSettings({
        HOST: '127.0.0.1',
        PORT: '0',
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: '0',
        DEBUG_HOST: '127.0.0.1',
        DEBUG_PORT: '0',
        USE_STATSD: 'false',
        RUNTIME_ROOT: dir,
        RUNTIME_WATCH_ROOT: 'false',
        GRPC_SERVER_USE_TLS: 'true',
        GRPC_SERVER_TLS_CERT: path.join(dir, 'server.crt'),
        GRPC_SERVER_TLS_KEY: path.join(dir, 'server.key'),
        GRPC_CLIENT_TLS_CACERT: path.join(dir, 'ca.crt'),
        GRPC_CLIENT_TLS_SAN: 'client.example',
      }),
      { ...defaultRunnerDeps(silentLogger), statsOutput: () => undefined },
    );
  });

  after(async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a client with a certificate for the required SAN', async () => {
    const res = await call(grpc.credentials.createSsl(file('ca.crt'), file('client.key'), file('client.crt')));
    expect(res.overallCode).to.equal(RateLimitResponse_Code.OK);
  });

  it('refuses a certificate for another SAN, a client without a certificate, and plaintext', async () => {
    const wrongSan = (await call(
      grpc.credentials.createSsl(file('ca.crt'), file('other.key'), file('other.crt')),
    ).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(wrongSan.code).to.equal(grpc.status.UNAUTHENTICATED);
    const noCert = (await call(grpc.credentials.createSsl(file('ca.crt'))).catch(
      (e: unknown) => e,
    )) as grpc.ServiceError;
    expect(noCert.code).to.equal(grpc.status.UNAVAILABLE);
    const plain = (await call(grpc.credentials.createInsecure()).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(plain.code).to.equal(grpc.status.UNAVAILABLE);
  });

  it('lets the CLI client use TLS flags', async () => {
    const result = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'sidecar/cli/client.ts',
          '-dial_string',
          `localhost:${running.grpcPort}`,
          '-domain',
          'test',
          '-descriptors',
          'free=x',
          '-grpc-use-tls',
          '-grpc-server-ca-file',
          path.join(dir, 'ca.crt'),
          '-grpc-cert-file',
          path.join(dir, 'client.crt'),
          '-grpc-key-file',
          path.join(dir, 'client.key'),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.on('close', (code) => resolve({ code, stdout }));
    });
    expect(result.code).to.equal(0);
    expect(result.stdout).to.contain('Flag: --grpc-use-tls="true"');
    expect(result.stdout).to.contain('response: overall_code:OK statuses:{code:OK}');
  });

  it('fails startup naming the variable when a certificate file is missing', async () => {
    const err = await startRateLimitServer(
      loadSettings({
        PORT: '0',
        GRPC_PORT: '0',
        DEBUG_PORT: '0',
        USE_STATSD: 'false',
        RUNTIME_ROOT: dir,
        RUNTIME_WATCH_ROOT: 'false',
        GRPC_SERVER_USE_TLS: 'true',
        GRPC_SERVER_TLS_CERT: path.join(dir, 'missing.crt'),
        GRPC_SERVER_TLS_KEY: path.join(dir, 'server.key'),
      }),
      { ...defaultRunnerDeps(silentLogger), statsOutput: () => undefined },
    ).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(SettingsError);
    expect((err as SettingsError).message).to.match(/^cannot read GRPC_SERVER_TLS_CERT file ".*missing\.crt": ENOENT/);
  });
});
