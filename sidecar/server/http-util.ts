// Small node:http helpers shared by the HTTP, debug and Prometheus listeners: Go-style error bodies, listen, stop.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Writes what Go's http.Error writes: text/plain, nosniff, the message plus a newline. */
export function sendPlainError(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(message + '\n');
}

/** The path part of a request URL (no query string). */
export function pathOf(req: http.IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** The query parameters of a request URL. */
export function queryOf(req: http.IncomingMessage): URLSearchParams {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
}

/**
 * Listens on host:port and resolves with the bound port.
 * @throws Error naming the address when it cannot be bound
 */
export function listen(server: http.Server, host: string, port: number, what: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const onError = (err: Error): void =>
      reject(new Error(`failed to listen for ${what} on ${host}:${port}: ${err.message}`));
    server.once('error', onError);
    server.listen(port, host === '' ? undefined : host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops accepting, lets in-flight requests finish, closes every connection after graceMs. */
export function stopServer(server: http.Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads the whole request body as UTF-8.
 * @throws TypeError when the body is not valid UTF-8 (protojson refuses such input rather than repairing it)
 */
export function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(strictUtf8.decode(Buffer.concat(chunks)));
      } catch (err) {
        reject(err as Error);
      }
    });
    req.on('error', reject);
  });
}
