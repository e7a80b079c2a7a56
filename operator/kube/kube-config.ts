// Where and how to reach the API server: @kubernetes/client-node's KubeConfig (kubeconfig files or in-cluster), checked once.
// Pinned to 1.4.0: 2.x cannot be imported on Node 20 (its bundled undici needs zlib zstd, Node ≥ 22).
import { KubeConfig } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';

export class KubeConfigError extends Error {
  readonly code = 'kubeconfig';
  constructor(message: string) {
    super(message);
    this.name = 'KubeConfigError';
  }
}

type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

/**
 * kubectl's `tokenFile` user field. The package reads only `token-file`, once at load, without trimming; client-go
 * re-reads the file because projected tokens rotate, so this does too (at most once a minute, trimmed).
 */
function tokenFileAuthenticator(files: ReadonlyMap<string, string>, nowMs: () => number): Authenticator {
  const cache = new Map<string, { token: string; readAtMs: number }>();
  return {
    isAuthProvider: (user) => files.has(user.name) && !user.token,
    applyAuthentication(user, opts) {
      const file = files.get(user.name);
      if (file === undefined) return Promise.resolve();
      let entry = cache.get(file);
      if (entry === undefined || nowMs() - entry.readAtMs > 60_000) {
        entry = { token: readFileSync(file, 'utf8').trim(), readAtMs: nowMs() };
        cache.set(file, entry);
      }
      opts.headers = { ...opts.headers, Authorization: `Bearer ${entry.token}` };
      return Promise.resolve();
    },
  };
}

/** Users of one kubeconfig file that name a `tokenFile`, resolved against the file's directory. */
function tokenFilesOf(file: string, text: string): Map<string, string> {
  const found = new Map<string, string>();
  const doc = parse(text) as { users?: { name?: unknown; user?: { tokenFile?: unknown } }[] } | null;
  for (const entry of Array.isArray(doc?.users) ? doc.users : []) {
    const tokenFile = entry?.user?.tokenFile;
    if (typeof entry?.name === 'string' && typeof tokenFile === 'string' && tokenFile !== '') {
      found.set(entry.name, path.resolve(path.dirname(file), tokenFile));
    }
  }
  return found;
}

function loadFile(file: string, tokenFiles: Map<string, string>): KubeConfig {
  const kc = new KubeConfig();
  try {
    const text = readFileSync(file, 'utf8');
    kc.loadFromString(text);
    kc.makePathsAbsolute(path.dirname(file));
    // First file wins per user name, as in the merge below.
    for (const [user, tokenFile] of tokenFilesOf(file, text))
      if (!tokenFiles.has(user)) tokenFiles.set(user, tokenFile);
  } catch (err) {
    throw new KubeConfigError(`cannot read kubeconfig ${file}: ${(err as Error).message}`);
  }
  return kc;
}

/** Rejects a configuration without a usable current context now, instead of at the first request. */
function checked(kc: KubeConfig, source: string): KubeConfig {
  const contextName = kc.getCurrentContext();
  if (kc.getContextObject(contextName) === null) {
    throw new KubeConfigError(`${source}: current context '${contextName}' not found`);
  }
  const cluster = kc.getCurrentCluster();
  if (cluster === null || cluster.server === '') {
    throw new KubeConfigError(`${source}: the current context's cluster is not found or has no server`);
  }
  try {
    new URL(cluster.server);
  } catch {
    throw new KubeConfigError(`${source}: cluster server '${cluster.server}' is not a URL`);
  }
  return kc;
}

/**
 * One or more kubeconfig files (`KUBECONFIG` syntax: path-delimiter separated; later files add clusters, users and
 * contexts, the first file's current context wins unless it has none), as kubectl merges them. Token, token file,
 * client certificate, basic auth, exec and auth-provider users all work.
 * @throws KubeConfigError for an unreadable file or a missing context/cluster.
 */
export function kubeconfigFromFiles(files: string): KubeConfig {
  const list = files.split(path.delimiter).filter((p) => p !== '');
  if (list.length === 0) throw new KubeConfigError('no kubeconfig file given');
  const tokenFiles = new Map<string, string>();
  const [first, ...rest] = list.map((f) => loadFile(f, tokenFiles));
  const kc = first as KubeConfig;
  // kubectl's merge: the first file that names a cluster, user, context or current context wins. (The package's
  // mergeConfig throws on duplicate names and lets later files override the current context.)
  for (const other of rest) {
    for (const c of other.getClusters()) if (kc.getCluster(c.name) === null) kc.addCluster(c);
    for (const u of other.getUsers()) if (kc.getUser(u.name) === null) kc.addUser(u);
    for (const x of other.getContexts()) if (kc.getContextObject(x.name) === null) kc.addContext(x);
    if (!kc.getCurrentContext() && other.getCurrentContext()) kc.setCurrentContext(other.getCurrentContext());
  }
  if (tokenFiles.size > 0) kc.addAuthenticator(tokenFileAuthenticator(tokenFiles, Date.now));
  return checked(kc, `kubeconfig ${list.join(path.delimiter)}`);
}

/**
 * The in-cluster configuration (service account token, re-read as it rotates), or undefined when not in a pod.
 * @param rootDir prefix of `/var/run/secrets/kubernetes.io/serviceaccount` (tests only; '' in a pod).
 */
export function inClusterConfig(
  env: Readonly<Record<string, string | undefined>>,
  rootDir = '',
): KubeConfig | undefined {
  if (!env.KUBERNETES_SERVICE_HOST || !env.KUBERNETES_SERVICE_PORT) return undefined;
  const kc = new KubeConfig();
  // Reads KUBERNETES_SERVICE_HOST/PORT from process.env itself; env above only decides whether we are in a pod.
  kc.loadFromCluster(rootDir);
  return checked(kc, 'in-cluster configuration');
}

/** KUBECONFIG when given, else in-cluster, else ~/.kube/config (the operator's documented order). */
export function loadKubeConfig(kubeconfig: string, env: Readonly<Record<string, string | undefined>>): KubeConfig {
  if (kubeconfig.split(path.delimiter).some((p) => p !== '')) return kubeconfigFromFiles(kubeconfig);
  return inClusterConfig(env) ?? kubeconfigFromFiles(path.join(os.homedir(), '.kube', 'config'));
}
