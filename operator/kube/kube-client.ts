// The operator's Kubernetes REST client: JSON requests and watches, authenticated and TLS-configured by a KubeConfig.
// Auth + TLS (tokens, token files, client certs, exec and auth-provider users, in-cluster) come from
// @kubernetes/client-node (KubeConfig.applyToHTTPSOptions); watches use its Watch. Requests stay on node:https because
// the package's generated APIs are per-type (we need generic paths for CRs, status, leases and pods, with merge-patch)
// and it creates a new agent, thus a new TLS connection, for every request; status writes of thousands of CRs need
// keep-alive.
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import http from 'node:http';
import https from 'node:https';

/** A non-2xx answer from the API server; `status` is the HTTP status, `reason` the Status object's reason. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
  get code(): 'not_found' | 'conflict' | 'gone' | 'invalid' | 'api_error' {
    if (this.status === 404) return 'not_found';
    if (this.status === 409) return 'conflict';
    if (this.status === 410) return 'gone';
    if (this.status === 422) return 'invalid';
    return 'api_error';
  }
}

export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: Record<string, unknown>;
}

export interface KubeClient {
  /** The server URL (for logs). */
  readonly server: string;
  /**
   * One JSON request. Resolves with the parsed body of a 2xx answer.
   * @throws KubeApiError on any other status; a network or authentication (e.g. exec plugin) error as it comes.
   */
  request(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
    accept?: string,
  ): Promise<Record<string, unknown>>;
  /**
   * Streams watch events of `path` (which must carry `watch=1`) until the server closes the stream (resolves)
   * or the request fails (rejects with KubeApiError or a network error). An `onEvent` that throws ends the watch
   * with that error. `signal` aborts it (resolves).
   */
  watch(path: string, onEvent: (event: WatchEvent) => void, signal: AbortSignal): Promise<void>;
}

/** The TLS material an agent was made for; a new agent is needed when it changes (e.g. an exec plugin's new cert). */
interface AgentEntry {
  readonly agent: http.Agent;
  readonly material: readonly unknown[];
}

function sameMaterial(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.every((x, i) => {
    const y = b[i];
    if (Buffer.isBuffer(x) && Buffer.isBuffer(y)) return x.equals(y);
    return x === y;
  });
}

/**
 * @throws KubeConfigError-like Error when the configuration has no current cluster (kube-config.ts checks it first).
 */
export function createKubeClient(kc: KubeConfig): KubeClient {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('kubeconfig has no current cluster');
  const base = new URL(cluster.server);
  const plain = base.protocol === 'http:';
  const transport = plain ? http : https;
  let cached: AgentEntry | undefined;

  /** Request options with auth headers and TLS from the KubeConfig, on a keep-alive agent reused while TLS is unchanged. */
  async function options(method: string, path: string, headers: Record<string, string>): Promise<https.RequestOptions> {
    const opts: https.RequestOptions = { method, headers: { ...headers } };
    await kc.applyToHTTPSOptions(opts);
    // Behind a proxy the package's own (proxy) agent is needed; it is made per request there.
    if (!cluster?.proxyUrl) {
      const material = [opts.ca, opts.cert, opts.key, opts.servername, opts.rejectUnauthorized];
      if (cached === undefined || !sameMaterial(cached.material, material)) {
        cached?.agent.destroy();
        const agentOptions: https.AgentOptions = {
          keepAlive: true,
          ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
          ...(opts.cert !== undefined ? { cert: opts.cert } : {}),
          ...(opts.key !== undefined ? { key: opts.key } : {}),
          ...(opts.servername !== undefined ? { servername: opts.servername } : {}),
          ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
        };
        cached = { agent: plain ? new http.Agent({ keepAlive: true }) : new https.Agent(agentOptions), material };
      }
      opts.agent = cached.agent;
    }
    return {
      ...opts,
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port,
      path: `${base.pathname.replace(/\/$/, '')}${path}`,
    };
  }

  async function readAll(res: http.IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  function apiError(status: number, text: string): KubeApiError {
    try {
      const parsed = JSON.parse(text) as { reason?: string; message?: string };
      return new KubeApiError(status, parsed.reason ?? '', parsed.message ?? text);
    } catch {
      return new KubeApiError(status, '', text.slice(0, 500));
    }
  }

  const watcher = new Watch(kc);

  return {
    server: cluster.server,
    async request(method, path, body, contentType = 'application/json', accept = 'application/json') {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const opts = await options(method, path, {
        Accept: accept,
        ...(payload !== undefined ? { 'Content-Type': contentType } : {}),
      });
      const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const req = transport.request(opts, resolve);
        req.on('error', reject);
        req.end(payload);
      });
      const text = await readAll(res);
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300) throw apiError(status, text);
      return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
    },
    async watch(path, onEvent, signal) {
      const url = new URL(path, 'http://placeholder');
      const query: Record<string, string> = {};
      for (const [k, v] of url.searchParams) if (k !== 'watch') query[k] = v;
      if (signal.aborted) return;
      await new Promise<void>((resolve, reject) => {
        let failure: unknown;
        let controller: AbortController | undefined;
        let finished = false;
        const onAbort = (): void => controller?.abort();
        const done = (err: unknown): void => {
          if (finished) return;
          finished = true;
          signal.removeEventListener('abort', onAbort);
          if (failure !== undefined) reject(failure);
          else if (signal.aborted || err === null || err === undefined) resolve();
          else {
            // The package's Watch reports a non-200 answer as an Error with statusCode (the body is not read).
            const status = (err as { statusCode?: unknown }).statusCode;
            reject(typeof status === 'number' ? new KubeApiError(status, '', (err as Error).message) : err);
          }
        };
        watcher
          .watch(
            url.pathname,
            query,
            (type: string, object: unknown) => {
              if (failure !== undefined) return;
              try {
                onEvent({ type: type as WatchEvent['type'], object: (object ?? {}) as Record<string, unknown> });
              } catch (err) {
                // The package swallows callback errors; stop the watch ourselves and report this one.
                failure = err;
                controller?.abort();
              }
            },
            done,
          )
          .then((c) => {
            controller = c;
            if (signal.aborted || failure !== undefined) c.abort();
            else signal.addEventListener('abort', onAbort, { once: true });
          }, done);
      });
    },
  };
}
