// An exclusive, PID-stamped lock file that keeps two processes from opening one PGlite data directory.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import { StoreError } from './database.js';

export interface DataDirLock {
  /** Path of the lock file. */
  readonly path: string;
  /** Removes the lock file if this process still owns it. Safe to call twice. */
  release(): void;
}

interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly program: string;
}

function readOwner(lockPath: string): LockOwner | null {
  try {
    const parsed = JSON.parse(readFileSync(lockPath, 'utf8')) as Partial<LockOwner>;
    if (typeof parsed.pid !== 'number') return null;
    return { pid: parsed.pid, host: String(parsed.host ?? ''), program: String(parsed.program ?? 'unknown') };
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock for `program` (e.g. "chorus-speech"). A lock left by a dead process on this host is replaced;
 * a live owner makes this throw StoreError('data_dir_locked') whose message names the owner and what to do.
 */
export function acquireDataDirLock(dataDir: string, program: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = `${dataDir}/store.lock`;
  const me: LockOwner = { pid: process.pid, host: os.hostname(), program };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const fd = openSync(lockPath, 'wx', 0o644);
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      let released = false;
      return {
        path: lockPath,
        release() {
          if (released) return;
          released = true;
          const owner = readOwner(lockPath);
          if (owner !== null && owner.pid === me.pid && owner.host === me.host) rmSync(lockPath, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = readOwner(lockPath);
    // A half-written lock (owner null) is only trusted once; after that it is treated as stale.
    if (owner !== null && (owner.host !== me.host || isAlive(owner.pid))) {
      throw new StoreError(
        'data_dir_locked',
        `the data directory ${dataDir} is in use by ${owner.program} (pid ${owner.pid} on ${owner.host}); ` +
          'stop it first, or set DATABASE_URL so that both use PostgreSQL',
      );
    }
    if (owner === null && attempt === 0) continue;
    rmSync(lockPath, { force: true });
  }
  throw new StoreError('data_dir_locked', `could not take the lock ${lockPath}`);
}
