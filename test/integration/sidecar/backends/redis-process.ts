// A redis-server child that a test can stop, start again on the same port, pause (SIGSTOP) and resume.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from '../../../support/ports.js';
import { requireBinary, startProcess, type RunningProcess } from '../../../support/process.js';

export interface ControlledRedis {
  readonly port: number;
  readonly url: string;
  readonly unixSocket: string;
  /** Starts redis-server (again) on the same port and socket; data is not kept. */
  start(): Promise<void>;
  stop(): Promise<void>;
  pause(): void;
  resume(): void;
  /** Stops it and removes its directory. */
  dispose(): Promise<void>;
}

/** Prepares a redis-server on a free port without starting it (call start()). */
export async function controlledRedis(extraArgs: readonly string[] = []): Promise<ControlledRedis> {
  const binary = requireBinary('redis-server', 'run `make deps` (apt-get install -y redis-server)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-redis-ctl-'));
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
  const stop = async (): Promise<void> => {
    proc?.child.kill('SIGCONT');
    await proc?.stop();
    proc = undefined;
  };
  return {
    port,
    url: `127.0.0.1:${port}`,
    unixSocket,
    async start() {
      proc = startProcess(binary, args);
      try {
        await waitForPort(port);
      } catch (err) {
        throw new Error(`redis-server did not start: ${(err as Error).message}\n${proc.output()}`, { cause: err });
      }
    },
    stop,
    pause() {
      proc?.child.kill('SIGSTOP');
    },
    resume() {
      proc?.child.kill('SIGCONT');
    },
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
