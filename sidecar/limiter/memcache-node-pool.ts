// Connections to one memcache node: reuse idle ones, dial when none is idle, keep at most maxIdle afterwards.
import { connectMemcache, type ConnectOptions, type MemcacheConnection } from './memcache-connection.js';
import { MemcacheError } from './memcache-error.js';
import type { MemcacheAddress } from './memcache-server-list.js';

export interface MemcacheNodePool {
  /**
   * Runs `fn` on an idle connection, or a new one when none is idle (there is no cap on busy connections, as in
   * gomemcache). Afterwards the connection goes back to the idle list when it is still usable and fewer than
   * maxIdle are idle; otherwise it is closed.
   * @throws MemcacheError from connecting, or whatever fn throws
   */
  withConnection<T>(fn: (connection: MemcacheConnection) => Promise<T>): Promise<T>;
  idleCount(): number;
  /** Closes idle connections now and busy ones when they are returned; later calls reject with `connection`. */
  close(): void;
}

export interface MemcacheNodePoolOptions extends ConnectOptions {
  /** MEMCACHE_MAX_IDLE_CONNS; 0 closes every connection after use. */
  readonly maxIdle: number;
}

export function createMemcacheNodePool(node: MemcacheAddress, options: MemcacheNodePoolOptions): MemcacheNodePool {
  const idle: MemcacheConnection[] = [];
  let closed = false;

  const release = (connection: MemcacheConnection): void => {
    if (!closed && connection.usable() && idle.length < options.maxIdle) idle.push(connection);
    else connection.destroy();
  };

  return {
    async withConnection(fn) {
      if (closed) throw new MemcacheError('connection', `memcache: pool for ${node.address} is closed`);
      let connection: MemcacheConnection | undefined;
      while (connection === undefined && idle.length > 0) {
        const candidate = idle.pop()!;
        if (candidate.usable()) connection = candidate;
      }
      connection ??= await connectMemcache(node, options);
      try {
        return await fn(connection);
      } finally {
        release(connection);
      }
    },
    idleCount: () => idle.length,
    close() {
      closed = true;
      for (const connection of idle.splice(0)) connection.destroy();
    },
  };
}
