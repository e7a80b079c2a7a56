// A real redis-server on a free loopback port (or unix socket), in a temp dir, for integration tests.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from './ports.js';
import { requireBinary, startProcess, type RunningProcess } from './process.js';

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  readonly unixSocket: string;
  readonly url: string;
  stop(): Promise<void>;
  /** Stops the server and starts it again on the same port (data is not kept). */
  restart(): Promise<void>;
}

export async function startRedisServer(extraArgs: readonly string[] = []): Promise<RedisServer> {
  const binary = requireBinary('redis-server', 'run `make deps` (apt-get install -y redis-server)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-redis-'));
  const port = await freePort();
  const unixSocket = path.join(dir, 'redis.sock');
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--unixsocket',
    unixSocket,
    '--unixsocketperm',
    '700',
    ...extraArgs,
  ];
  let proc: RunningProcess | undefined;
  const launch = async (): Promise<void> => {
    proc = startProcess(binary, args);
    try {
      await waitForPort(port);
    } catch (err) {
      throw new Error(`redis-server did not start: ${(err as Error).message}\n${proc.output()}`, { cause: err });
    }
  };
  await launch();
  return {
    host: '127.0.0.1',
    port,
    unixSocket,
    url: `127.0.0.1:${port}`,
    async stop() {
      await proc?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await proc?.stop();
      await launch();
    },
  };
}
