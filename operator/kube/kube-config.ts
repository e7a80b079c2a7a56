// Where and how to reach the API server: in-cluster service account, or a kubeconfig file (token and client-cert users).
// Own loader because @kubernetes/client-node 2.0.1 cannot be imported on Node 20 (its undici 8 needs zlib zstd, Node ≥ 22).
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

export interface KubeConnection {
  /** e.g. https://10.0.0.1:443 */
  readonly server: string;
  readonly ca: Buffer | undefined;
  readonly cert: Buffer | undefined;
  readonly key: Buffer | undefined;
  readonly insecureSkipTlsVerify: boolean;
  /** Expected server name when it differs from the host in `server`; undefined otherwise. */
  readonly tlsServerName: string | undefined;
  /** The bearer token for the next request ('' for none); re-read from file because projected tokens rotate. */
  token(): string;
  /** Basic auth `user:password`, or undefined. */
  readonly basicAuth: string | undefined;
}

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

function fileTokenReader(file: string): () => string {
  let cached = '';
  let readAtMs = 0;
  return () => {
    if (Date.now() - readAtMs > 60_000) {
      cached = readFileSync(file, 'utf8').trim();
      readAtMs = Date.now();
    }
    return cached;
  };
}

function dataOrFile(data: unknown, file: unknown, baseDir: string): Buffer | undefined {
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64');
  if (typeof file === 'string' && file !== '') return readFileSync(path.resolve(baseDir, file));
  return undefined;
}

type Named = {
  name?: string;
  cluster?: Record<string, unknown>;
  user?: Record<string, unknown>;
  context?: Record<string, unknown>;
};

/** The in-cluster connection (service account), or undefined when not running in a pod. */
export function inClusterConnection(env: Readonly<Record<string, string | undefined>>): KubeConnection | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) return undefined;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${port}`,
    ca: readFileSync(path.join(SA_DIR, 'ca.crt')),
    cert: undefined,
    key: undefined,
    insecureSkipTlsVerify: false,
    tlsServerName: undefined,
    token: fileTokenReader(path.join(SA_DIR, 'token')),
    basicAuth: undefined,
  };
}

/**
 * The current context of a kubeconfig file.
 * @throws KubeConfigError for a missing context/cluster/user or an unsupported auth method (exec, auth-provider).
 */
export function kubeconfigConnection(file: string): KubeConnection {
  let doc: Record<string, unknown>;
  try {
    doc = parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new KubeConfigError(`cannot read kubeconfig ${file}: ${(err as Error).message}`);
  }
  const baseDir = path.dirname(file);
  const find = (list: unknown, name: unknown): Named | undefined =>
    Array.isArray(list) ? (list as Named[]).find((x) => x.name === name) : undefined;
  const contextName = doc['current-context'];
  const context = find(doc.contexts, contextName)?.context;
  if (context === undefined)
    throw new KubeConfigError(`kubeconfig ${file}: current context '${String(contextName)}' not found`);
  const cluster = find(doc.clusters, context.cluster)?.cluster;
  if (cluster === undefined || typeof cluster.server !== 'string') {
    throw new KubeConfigError(`kubeconfig ${file}: cluster '${String(context.cluster)}' not found or has no server`);
  }
  const user = find(doc.users, context.user)?.user ?? {};
  if (user.exec !== undefined || user['auth-provider'] !== undefined) {
    throw new KubeConfigError(
      `kubeconfig ${file}: exec and auth-provider users are not supported; use a token or client certificate`,
    );
  }
  const tokenFile = typeof user.tokenFile === 'string' ? path.resolve(baseDir, user.tokenFile) : undefined;
  const staticToken = typeof user.token === 'string' ? user.token : '';
  return {
    server: cluster.server,
    ca: dataOrFile(cluster['certificate-authority-data'], cluster['certificate-authority'], baseDir),
    cert: dataOrFile(user['client-certificate-data'], user['client-certificate'], baseDir),
    key: dataOrFile(user['client-key-data'], user['client-key'], baseDir),
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] : undefined,
    token: tokenFile !== undefined ? fileTokenReader(tokenFile) : () => staticToken,
    basicAuth:
      typeof user.username === 'string' && typeof user.password === 'string'
        ? `${user.username}:${user.password}`
        : undefined,
  };
}

/** KUBECONFIG (first path) when given, else in-cluster, else ~/.kube/config. */
export function loadKubeConnection(
  kubeconfig: string,
  env: Readonly<Record<string, string | undefined>>,
): KubeConnection {
  const first = kubeconfig.split(path.delimiter).find((p) => p !== '');
  if (first !== undefined) return kubeconfigConnection(first);
  return inClusterConnection(env) ?? kubeconfigConnection(path.join(os.homedir(), '.kube', 'config'));
}
