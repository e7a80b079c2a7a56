// One memcached text-protocol connection: a command out, its reply parsed back, one command at a time.
import net from 'node:net';
import tls from 'node:tls';
import { MemcacheError } from './memcache-error.js';
import type { MemcacheAddress } from './memcache-server-list.js';

/**
 * Parses a complete reply from the start of `buffer`: returns the value and how many bytes it used, or
 * undefined when more bytes are needed.
 * @throws MemcacheError `server_error` for an error reply or a line it cannot understand
 */
export type ReplyParser<T> = (buffer: Buffer) => { readonly value: T; readonly consumed: number } | undefined;

export interface MemcacheConnection {
  /**
   * Writes `command` and resolves with the parsed reply. The whole exchange must finish within timeoutMs, else
   * the connection is destroyed and the call rejects with `timeout`. Only one call at a time (the pool ensures it).
   * @throws MemcacheError `timeout`, `connection`, or what the parser throws
   */
  send<T>(command: string | Buffer, parse: ReplyParser<T>, timeoutMs: number): Promise<T>;
  /** False once the socket closed or an exchange failed in a way that leaves the stream unusable. */
  usable(): boolean;
  /** Closes the socket at once; a pending send rejects with `connection`. */
  destroy(): void;
}

export interface ConnectOptions {
  readonly timeoutMs: number;
  /** TLS client options; plain TCP when undefined. */
  readonly tls?: tls.ConnectionOptions;
}

/** Opens a connection within timeoutMs. @throws MemcacheError `timeout` or `connection` */
export function connectMemcache(node: MemcacheAddress, options: ConnectOptions): Promise<MemcacheConnection> {
  return new Promise((resolve, reject) => {
    const socket: net.Socket =
      options.tls === undefined
        ? net.connect({ host: node.host, port: node.port })
        : tls.connect({
            servername: net.isIP(node.host) === 0 ? node.host : undefined,
            ...options.tls,
            host: node.host,
            port: node.port,
          });
    socket.setNoDelay(true);
    const readyEvent = options.tls === undefined ? 'connect' : 'secureConnect';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new MemcacheError('timeout', `memcache: connect timeout to ${node.address}`));
    }, options.timeoutMs);
    const onError = (err: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      reject(new MemcacheError('connection', `memcache: dial ${node.address}: ${err.message}`, { cause: err }));
    };
    socket.once('error', onError);
    socket.once(readyEvent, () => {
      clearTimeout(timer);
      socket.off('error', onError);
      resolve(wrapSocket(socket, node.address));
    });
  });
}

function wrapSocket(socket: net.Socket, address: string): MemcacheConnection {
  let buffer: Buffer = Buffer.alloc(0);
  let closed = false;
  let pending:
    | { readonly parse: ReplyParser<unknown>; resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout }
    | undefined;

  const fail = (err: MemcacheError): void => {
    closed = true;
    socket.destroy();
    const p = pending;
    pending = undefined;
    if (p !== undefined) {
      clearTimeout(p.timer);
      p.reject(err);
    }
  };

  socket.on('data', (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    const p = pending;
    if (p === undefined) {
      // Bytes nobody asked for: the stream is out of step, so it must not be reused.
      fail(new MemcacheError('server_error', `memcache: unexpected bytes from ${address}`));
      return;
    }
    let parsed: { readonly value: unknown; readonly consumed: number } | undefined;
    try {
      parsed = p.parse(buffer);
    } catch (err) {
      fail(err instanceof MemcacheError ? err : new MemcacheError('server_error', (err as Error).message));
      return;
    }
    if (parsed === undefined) return;
    buffer = buffer.subarray(parsed.consumed);
    pending = undefined;
    clearTimeout(p.timer);
    if (buffer.length > 0) {
      fail(new MemcacheError('server_error', `memcache: trailing bytes after a reply from ${address}`));
    }
    p.resolve(parsed.value);
  });
  socket.on('error', (err) => fail(new MemcacheError('connection', `memcache: ${address}: ${err.message}`)));
  socket.on('close', () => fail(new MemcacheError('connection', `memcache: connection to ${address} closed`)));

  return {
    send<T>(command: string | Buffer, parse: ReplyParser<T>, timeoutMs: number): Promise<T> {
      if (closed) return Promise.reject(new MemcacheError('connection', `memcache: connection to ${address} closed`));
      if (pending !== undefined) return Promise.reject(new Error('memcache connection is busy'));
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(
          () => fail(new MemcacheError('timeout', `memcache: i/o timeout after ${timeoutMs} ms on ${address}`)),
          timeoutMs,
        );
        pending = { parse, resolve: resolve as (v: unknown) => void, reject, timer };
        socket.write(command);
      });
    },
    usable: () => !closed,
    destroy() {
      fail(new MemcacheError('connection', `memcache: connection to ${address} closed`));
    },
  };
}
