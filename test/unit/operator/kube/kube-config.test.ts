// kubeconfig loading: current context, data vs file fields, token files, unsupported auth, in-cluster detection.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { inClusterConnection, KubeConfigError, kubeconfigConnection } from '../../../../operator/kube/kube-config.js';

describe('kubeconfig loader', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-kc-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function write(doc: unknown): string {
    const file = path.join(dir, 'config');
    writeFileSync(file, stringify(doc));
    return file;
  }
  const base = (user: Record<string, unknown>, cluster: Record<string, unknown> = {}) => ({
    'current-context': 'b',
    contexts: [
      { name: 'a', context: { cluster: 'c1', user: 'u1' } },
      { name: 'b', context: { cluster: 'c2', user: 'u2' } },
    ],
    clusters: [
      { name: 'c1', cluster: { server: 'https://wrong:1' } },
      { name: 'c2', cluster: { server: 'https://right:6443', ...cluster } },
    ],
    users: [{ name: 'u2', user }],
  });

  it('uses the current context, inline CA data and a static token', () => {
    const c = kubeconfigConnection(
      write(base({ token: 'abc' }, { 'certificate-authority-data': Buffer.from('CA').toString('base64') })),
    );
    expect(c.server).to.equal('https://right:6443');
    expect(c.ca?.toString()).to.equal('CA');
    expect(c.token()).to.equal('abc');
    expect(c.insecureSkipTlsVerify).to.equal(false);
  });

  it('reads client certificate, key and token files relative to the kubeconfig', () => {
    writeFileSync(path.join(dir, 'c.pem'), 'CERT');
    writeFileSync(path.join(dir, 'k.pem'), 'KEY');
    writeFileSync(path.join(dir, 'tok'), 'filetoken\n');
    const c = kubeconfigConnection(
      write(
        base(
          { 'client-certificate': 'c.pem', 'client-key': 'k.pem', tokenFile: 'tok' },
          { 'insecure-skip-tls-verify': true },
        ),
      ),
    );
    expect([c.cert?.toString(), c.key?.toString(), c.token(), c.insecureSkipTlsVerify]).to.deep.equal([
      'CERT',
      'KEY',
      'filetoken',
      true,
    ]);
  });

  it('refuses exec users and a missing context with a typed error', () => {
    expect(() => kubeconfigConnection(write(base({ exec: { command: 'aws' } })))).to.throw(KubeConfigError, /exec/);
    expect(() => kubeconfigConnection(write({ ...base({}), 'current-context': 'nope' }))).to.throw(
      KubeConfigError,
      /nope/,
    );
    expect(() => kubeconfigConnection(path.join(dir, 'missing'))).to.throw(KubeConfigError);
  });

  it('is not in-cluster without KUBERNETES_SERVICE_HOST/PORT', () => {
    expect(inClusterConnection({})).to.equal(undefined);
  });
});
