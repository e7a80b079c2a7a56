// Child processes for test servers: started with a clear error when the binary is missing, always stopped.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Finds an executable on PATH, or throws an error that says how to install it (tests never skip). */
export function requireBinary(name: string, hint: string): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  throw new Error(`${name} not found on PATH: ${hint}`);
}

export interface RunningProcess {
  readonly child: ChildProcess;
  /** Collected stdout+stderr, for failure messages. */
  output(): string;
  /** Sends SIGTERM (then SIGKILL after graceMs) and resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

export function startProcess(command: string, args: readonly string[], options: SpawnOptions = {}): RunningProcess {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  let output = '';
  const append = (chunk: Buffer): void => {
    output += chunk.toString();
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    child,
    output: () => output,
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
