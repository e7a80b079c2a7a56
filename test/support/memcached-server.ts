// A real memcached on a free loopback port, for integration tests; stoppable and restartable on the same port.
import { freePort, waitForPort } from './ports.js';
import { requireBinary, startProcess, type RunningProcess } from './process.js';

export interface MemcachedServer {
  readonly host: string;
  readonly port: number;
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  stop(): Promise<void>;
  /** Starts it again on the same port after stop() (empty). */
  start(): Promise<void>;
}

export async function startMemcachedServer(extraArgs: readonly string[] = []): Promise<MemcachedServer> {
  const binary = requireBinary('memcached', 'run `make deps` (apt-get install -y memcached)');
  const port = await freePort();
  // memcached refuses to run as root unless told which user to run as.
  const user = process.getuid?.() === 0 ? ['-u', 'root'] : [];
  const args = ['-p', String(port), '-l', '127.0.0.1', '-U', '0', '-m', '16', '-t', '1', ...user, ...extraArgs];
  let proc: RunningProcess | undefined;
  const start = async (): Promise<void> => {
    proc = startProcess(binary, args);
    try {
      await waitForPort(port);
    } catch (err) {
      await proc.stop();
      throw new Error(`memcached did not start: ${(err as Error).message}\n${proc.output()}`, { cause: err });
    }
  };
  await start();
  return {
    host: '127.0.0.1',
    port,
    address: `127.0.0.1:${port}`,
    stop: async () => proc?.stop(),
    start,
  };
}
