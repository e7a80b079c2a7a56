// The operator's HTTP port: /metrics, /healthz (process alive) and /readyz (caches synced and the ADS port bound).
import http from 'node:http';
import type { Registry } from 'prom-client';

export interface HealthServerOptions {
  readonly registry: Registry;
  /** Readiness: returns '' when ready, else the reason. */
  readonly notReadyReason: () => string;
}

export interface HealthServer {
  listen(host: string, port: number): Promise<number>;
  close(): Promise<void>;
}

export function createHealthServer(options: HealthServerOptions): HealthServer {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const reason = options.notReadyReason();
      res
        .writeHead(reason === '' ? 200 : 503, { 'Content-Type': 'text/plain' })
        .end(reason === '' ? 'ok\n' : `${reason}\n`);
    } else if (path === '/metrics') {
      options.registry.metrics().then(
        (body) => res.writeHead(200, { 'Content-Type': options.registry.contentType }).end(body),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    } else {
      res.writeHead(404).end('not found\n');
    }
  });
  return {
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          const address = server.address();
          resolve(typeof address === 'object' && address !== null ? address.port : port);
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
