// A real etcd + kube-apiserver on free loopback ports with token auth, for operator integration tests (spec/k8s-test-rig.md §3).
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { freePort } from './ports.js';
import { startProcess, type RunningProcess } from './process.js';

export interface KubeApiServer {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** A kubeconfig file for the admin user (token auth, CA pinned). */
  readonly kubeconfigPath: string;
  readonly token: string;
  /**
   * Writes a kubeconfig for one of the extra users given to startKubeApiServer (no groups, so only what RBAC
   * grants it) and returns its path.
   */
  kubeconfigFor(user: string): string;
  /** PEM of the API server's self-signed serving certificate (its own CA). */
  readonly ca: Buffer;
  /**
   * Stops only the kube-apiserver (SIGTERM, SIGKILL after 10 s: with a client's watch open it does not finish its
   * graceful shutdown in that time; etcd and so all objects stay), runs `whileDown` if given, then starts it
   * again on the same port with the same certificates and tokens and resolves once /readyz is 200. A failing
   * `whileDown` still restarts the server before its error is rethrown, so `stop()` and later tests keep working.
   */
  restartApiServer(whileDown?: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

/** $CHORUS_TOOLS_BIN, as test/tools/env.sh sets it, or its default location. */
export function toolsBin(): string {
  if (process.env.CHORUS_TOOLS_BIN) return process.env.CHORUS_TOOLS_BIN;
  const cache = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  return path.join(process.env.CHORUS_TOOLS_DIR ?? path.join(cache, 'chorus-tools'), 'bin');
}

/** The path of a Go-built tool; throws (never skips) with how to build it. */
export function requireTool(name: string): string {
  const file = path.join(toolsBin(), name);
  try {
    accessSync(file, constants.X_OK);
    return file;
  } catch {
    throw new Error(`${name} not found in ${toolsBin()}: run \`make tools\` (test/tools/build-tools.sh) first`);
  }
}

async function poll(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs: number,
  proc: RunningProcess,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`${what} exited early:\n${proc.output().slice(-4000)}`);
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} not ready after ${timeoutMs} ms:\n${proc.output().slice(-4000)}`);
}

function get(url: string, ca?: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.get(url, ca ? { ca } : { rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.setTimeout(2000, () => req.destroy(new Error('timeout')));
  });
}

/** @param extraUsers user names that get token `<name>-token` and no groups (for RBAC tests). */
export async function startKubeApiServer(extraUsers: readonly string[] = []): Promise<KubeApiServer> {
  const etcdBin = requireTool('etcd');
  const apiserverBin = requireTool('kube-apiserver');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-kube-'));
  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const token = 'chorus-admin-token';
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(path.join(dir, 'sa.key'), privateKey.export({ type: 'pkcs1', format: 'pem' }));
  writeFileSync(
    path.join(dir, 'tokens.csv'),
    [`${token},admin,admin-uid,"system:masters"`, ...extraUsers.map((u) => `${u}-token,${u},${u}-uid`)].join('\n') +
      '\n',
  );
  mkdirSync(path.join(dir, 'certs'));
  const etcdHelp = (() => {
    try {
      return execFileSync(etcdBin, ['--help'], { stdio: 'pipe' }).toString();
    } catch (err) {
      return String((err as { stdout?: Buffer }).stdout ?? '');
    }
  })();
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const etcd = startProcess(etcdBin, [
    `--data-dir=${path.join(dir, 'etcd')}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
    ...(etcdHelp.includes('unsafe-no-fsync') ? ['--unsafe-no-fsync'] : []),
  ]);
  let apiserver: RunningProcess | undefined;
  const stop = async (): Promise<void> => {
    await apiserver?.stop(10_000);
    await etcd.stop(5_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await poll(async () => (await get(`${etcdUrl}/health`)) === 200, 'etcd', 30_000, etcd);
    const url = `https://127.0.0.1:${apiPort}`;
    // Same flags, port and cert dir every time: a restart reuses the self-signed certificate it generated first.
    const launch = async (): Promise<void> => {
      const running = startProcess(apiserverBin, [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiPort}`,
        `--cert-dir=${path.join(dir, 'certs')}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        `--service-account-issuer=${url}/`,
        `--service-account-key-file=${path.join(dir, 'sa.key')}`,
        `--service-account-signing-key-file=${path.join(dir, 'sa.key')}`,
        `--token-auth-file=${path.join(dir, 'tokens.csv')}`,
        '--authorization-mode=RBAC',
        '--disable-admission-plugins=ServiceAccount',
      ]);
      apiserver = running;
      await poll(async () => (await get(`${url}/readyz`)) === 200, 'kube-apiserver', 120_000, running);
    };
    await launch();
    const ca = readFileSync(path.join(dir, 'certs', 'apiserver.crt'));
    const writeKubeconfig = (file: string, user: string, userToken: string): string => {
      writeFileSync(
        file,
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'test', cluster: { server: url, 'certificate-authority-data': ca.toString('base64') } }],
          users: [{ name: user, user: { token: userToken } }],
          contexts: [{ name: 'test', context: { cluster: 'test', user, namespace: 'default' } }],
          'current-context': 'test',
        }),
      );
      return file;
    };
    const kubeconfigPath = writeKubeconfig(path.join(dir, 'kubeconfig'), 'admin', token);
    return {
      url,
      kubeconfigPath,
      token,
      ca,
      kubeconfigFor(user) {
        if (!extraUsers.includes(user)) throw new Error(`${user} was not given to startKubeApiServer`);
        return writeKubeconfig(path.join(dir, `kubeconfig-${user}`), user, `${user}-token`);
      },
      async restartApiServer(whileDown) {
        await apiserver?.stop(10_000);
        apiserver = undefined;
        try {
          await whileDown?.();
        } finally {
          await launch();
        }
        // Clients pin `ca`; a regenerated certificate would break them in a less obvious place.
        if (!readFileSync(path.join(dir, 'certs', 'apiserver.crt')).equals(ca))
          throw new Error('kube-apiserver regenerated its serving certificate on restart');
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
