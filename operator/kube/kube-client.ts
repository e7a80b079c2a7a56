// A thin Kubernetes REST client: JSON requests and line-delimited watches over node:https with the loaded connection.
import http from 'node:http';
import https from 'node:https';
import type { KubeConnection } from './kube-config.js';

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
   * @throws KubeApiError on any other status; a network error as it comes.
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
   * or the request fails (rejects with KubeApiError or a network error). `signal` aborts it (resolves).
   */
  watch(path: string, onEvent: (event: WatchEvent) => void, signal: AbortSignal): Promise<void>;
}

export function createKubeClient(conn: KubeConnection): KubeClient {
  const base = new URL(conn.server);
  const transport = base.protocol === 'http:' ? http : https;
  const agent =
    base.protocol === 'http:'
      ? undefined
      : new https.Agent({
          keepAlive: true,
          ...(conn.ca !== undefined ? { ca: conn.ca } : {}),
          ...(conn.cert !== undefined ? { cert: conn.cert } : {}),
          ...(conn.key !== undefined ? { key: conn.key } : {}),
          ...(conn.tlsServerName !== undefined ? { servername: conn.tlsServerName } : {}),
          rejectUnauthorized: !conn.insecureSkipTlsVerify,
        });

  async function open(
    method: string,
    path: string,
    body: string | undefined,
    contentType: string,
    signal?: AbortSignal,
    accept = 'application/json',
  ): Promise<http.IncomingMessage> {
    const options: https.RequestOptions = {
      method,
      protocol: base.protocol,
      hostname: base.hostname,
      port: base.port,
      path: `${base.pathname.replace(/\/$/, '')}${path}`,
      headers: {
        Accept: accept,
        ...(body !== undefined ? { 'Content-Type': contentType } : {}),
        ...(conn.token() !== '' ? { Authorization: `Bearer ${conn.token()}` } : {}),
      },
      ...(conn.basicAuth !== undefined ? { auth: conn.basicAuth } : {}),
      ...(agent !== undefined ? { agent } : {}),
    };
    return new Promise((resolve, reject) => {
      const req = transport.request(options, (res) => {
        // Aborting a watch destroys the response too; the reader sees it through iteration, not as an event.
        res.on('error', () => undefined);
        resolve(res);
      });
      req.on('error', reject);
      // Not the `signal` request option: its AbortError escaped as an uncaught event on Node 20 in tests.
      signal?.addEventListener('abort', () => req.destroy(), { once: true });
      if (body !== undefined) req.write(body);
      req.end();
    });
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

  return {
    server: conn.server,
    async request(method, path, body, contentType = 'application/json', accept = 'application/json') {
      const res = await open(
        method,
        path,
        body === undefined ? undefined : JSON.stringify(body),
        contentType,
        undefined,
        accept,
      );
      const text = await readAll(res);
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300) throw apiError(status, text);
      return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
    },
    async watch(path, onEvent, signal) {
      let res: http.IncomingMessage;
      try {
        res = await open('GET', path, undefined, '', signal);
      } catch (err) {
        if (signal.aborted) return;
        throw err;
      }
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300) throw apiError(status, await readAll(res));
      let buffered = '';
      try {
        for await (const chunk of res) {
          buffered += (chunk as Buffer).toString('utf8');
          let newline = buffered.indexOf('\n');
          while (newline >= 0) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            if (line !== '') onEvent(JSON.parse(line) as WatchEvent);
            newline = buffered.indexOf('\n');
          }
        }
      } catch (err) {
        if (signal.aborted) return;
        throw err;
      }
    },
  };
}
