// Throw-away CA, server and client certificates made with the openssl binary, for TLS tests.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireBinary } from '../../../support/process.js';

export interface TestCerts {
  readonly dir: string;
  readonly caPem: string;
  readonly caFile: string;
  /** Server certificate for SAN `serverSan` (e.g. `IP:127.0.0.1` or `DNS:elsewhere.example`). */
  readonly serverCertFile: string;
  readonly serverKeyFile: string;
  readonly clientCertPem: string;
  readonly clientKeyPem: string;
  dispose(): void;
}

export function makeTestCerts(serverSan: string): TestCerts {
  const openssl = requireBinary('openssl', 'apt-get install -y openssl');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-tls-'));
  const file = (name: string): string => path.join(dir, name);
  const run = (args: string[]): void => {
    execFileSync(openssl, args, { stdio: 'pipe' });
  };
  run([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.crt'),
    '-days',
    '1',
    '-subj',
    '/CN=chorus-test-ca',
  ]);
  const issue = (name: string, ext: string): void => {
    run([
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      file(`${name}.key`),
      '-out',
      file(`${name}.csr`),
      '-subj',
      `/CN=${name}`,
    ]);
    writeFileSync(file(`${name}.ext`), ext);
    run([
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.crt'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file(`${name}.crt`),
      '-days',
      '1',
      '-extfile',
      file(`${name}.ext`),
    ]);
  };
  issue('server', `subjectAltName=${serverSan}\nextendedKeyUsage=serverAuth\n`);
  issue('client', 'extendedKeyUsage=clientAuth\n');
  return {
    dir,
    caPem: readFileSync(file('ca.crt'), 'utf8'),
    caFile: file('ca.crt'),
    serverCertFile: file('server.crt'),
    serverKeyFile: file('server.key'),
    clientCertPem: readFileSync(file('client.crt'), 'utf8'),
    clientKeyPem: readFileSync(file('client.key'), 'utf8'),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
