// Reads a memcached node directly over a raw socket (meta get), to check where and how the backend stored keys.
import net from 'node:net';

export interface StoredItem {
  readonly value: string;
  /** Remaining TTL in seconds as memcached reports it (-1 = never expires). */
  readonly ttlSeconds: number;
}

/** `mg <key> v t` on one node: the value and remaining TTL, or undefined when the node does not hold the key. */
export function readDirect(port: number, key: string): Promise<StoredItem | undefined> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no reply from memcached on ${port}`));
    }, 5000);
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('connect', () => socket.write(`mg ${key} v t\r\n`));
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      const finish = (item: StoredItem | undefined): void => {
        clearTimeout(timer);
        socket.destroy();
        resolve(item);
      };
      if (data === 'EN\r\n') return finish(undefined);
      const match = /^VA (\d+) t(-?\d+)\r\n/.exec(data);
      if (match === null) {
        if (data.includes('\r\n') && !data.startsWith('VA ')) {
          clearTimeout(timer);
          socket.destroy();
          reject(new Error(`unexpected reply ${JSON.stringify(data)}`));
        }
        return;
      }
      const size = Number(match[1]);
      if (data.length < match[0].length + size + 2) return;
      finish({ value: data.slice(match[0].length, match[0].length + size), ttlSeconds: Number(match[2]) });
    });
  });
}
