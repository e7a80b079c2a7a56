// kubeconfig loading through @kubernetes/client-node: current context, merging, the credentials each user kind sends.
import { expect } from 'chai';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { createKubeClient } from '../../../../operator/kube/kube-client.js';
import {
  inClusterConfig,
  KubeConfigError,
  kubeconfigFromFiles,
  loadKubeConfig,
} from '../../../../operator/kube/kube-config.js';

describe('kubeconfig loader', () => {
  let dir: string;
  let server: http.Server;
  let port: number;
  const seen: { authorization: string | undefined; path: string }[] = [];

  before(async () => {
    // A plain HTTP API stand-in that records the credentials each request carries.
    server = http.createServer((req, res) => {
      seen.push({ authorization: req.headers.authorization, path: req.url ?? '' });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"kind":"Status"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-kc-'));
    seen.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function write(doc: unknown, name = 'config'): string {
    const file = path.join(dir, name);
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
      { name: 'c2', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true, ...cluster } },
    ],
    users: [{ name: 'u2', user }],
  });

  async function authorizationFor(file: string): Promise<string | undefined> {
    await createKubeClient(kubeconfigFromFiles(file)).request('GET', '/api');
    return seen.at(-1)?.authorization;
  }

  it('uses the current context, its cluster and a static token', async () => {
    const kc = kubeconfigFromFiles(write(base({ token: 'abc' })));
    expect(kc.getCurrentCluster()?.server).to.equal(`http://127.0.0.1:${port}`);
    expect(await authorizationFor(write(base({ token: 'abc' })))).to.equal('Bearer abc');
  });

  it('reads CA data and client certificate files relative to the kubeconfig', async () => {
    writeFileSync(path.join(dir, 'c.pem'), 'CERT');
    writeFileSync(path.join(dir, 'k.pem'), 'KEY');
    const kc = kubeconfigFromFiles(
      write(
        base(
          { 'client-certificate': 'c.pem', 'client-key': 'k.pem' },
          {
            server: 'https://127.0.0.1:6443',
            'certificate-authority-data': Buffer.from('CA').toString('base64'),
            'insecure-skip-tls-verify': false,
          },
        ),
      ),
    );
    const opts: { ca?: unknown; cert?: unknown; key?: unknown } = {};
    await kc.applyToHTTPSOptions(opts);
    expect([String(opts.ca), String(opts.cert), String(opts.key)]).to.deep.equal(['CA', 'CERT', 'KEY']);
  });

  it("sends kubectl's tokenFile (relative, trimmed) and basic auth", async () => {
    writeFileSync(path.join(dir, 'tok'), 'filetoken\n');
    expect(await authorizationFor(write(base({ tokenFile: 'tok' })))).to.equal('Bearer filetoken');
    expect(await authorizationFor(write(base({ username: 'ann', password: 'pw' })))).to.equal(
      `Basic ${Buffer.from('ann:pw').toString('base64')}`,
    );
  });

  it('runs an exec credential plugin and sends the token it prints', async () => {
    const plugin = path.join(dir, 'plugin.sh');
    writeFileSync(
      plugin,
      '#!/bin/sh\necho \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-exec"}}\'\n',
    );
    chmodSync(plugin, 0o755);
    const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' };
    expect(await authorizationFor(write(base({ exec })))).to.equal('Bearer from-exec');
  });

  it('merges KUBECONFIG lists as kubectl does: the first current context and the first of each name win', async () => {
    const first = write({ ...base({ token: 'first' }), users: [] }, 'one');
    const second = write({ ...base({ token: 'second' }), 'current-context': 'a' }, 'two');
    const kc = kubeconfigFromFiles(`${first}${path.delimiter}${second}`);
    expect(kc.getCurrentContext()).to.equal('b');
    expect(kc.getCurrentUser()?.token).to.equal('second');
    expect(await authorizationFor(`${first}${path.delimiter}${second}`)).to.equal('Bearer second');
  });

  it('refuses a missing context, a missing file and a bad server with a typed error', () => {
    expect(() => kubeconfigFromFiles(write({ ...base({}), 'current-context': 'nope' }))).to.throw(
      KubeConfigError,
      /nope/,
    );
    expect(() => kubeconfigFromFiles(path.join(dir, 'missing'))).to.throw(KubeConfigError, /missing/);
    expect(() => kubeconfigFromFiles(write(base({}, { server: 'not a url' })))).to.throw(KubeConfigError, /URL/);
    expect(() => kubeconfigFromFiles('')).to.throw(KubeConfigError);
  });

  it('in a pod, uses the service account token and CA and brackets an IPv6 service host', async () => {
    const sa = path.join(dir, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(path.join(sa, 'token'), 'sa-token');
    writeFileSync(path.join(sa, 'ca.crt'), 'SA-CA');
    const env = { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' };
    // The package reads these from process.env itself.
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    Object.assign(process.env, env);
    try {
      const kc = inClusterConfig(env, dir);
      expect(kc?.getCurrentCluster()?.server).to.equal('https://[fd00::1]:443');
      const opts: { ca?: unknown; headers?: Record<string, string> } = {};
      await kc?.applyToHTTPSOptions(opts);
      expect([String(opts.ca), opts.headers?.Authorization]).to.deep.equal(['SA-CA', 'Bearer sa-token']);
    } finally {
      for (const [k, v] of [
        ['KUBERNETES_SERVICE_HOST', saved.host],
        ['KUBERNETES_SERVICE_PORT', saved.port],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('is not in-cluster without KUBERNETES_SERVICE_HOST/PORT, and then takes KUBECONFIG', () => {
    expect(inClusterConfig({})).to.equal(undefined);
    const file = write(base({ token: 'abc' }));
    expect(loadKubeConfig(file, {}).getCurrentContext()).to.equal('b');
  });
});
