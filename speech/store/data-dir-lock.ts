// An exclusive, PID-stamped lock file that keeps two processes from opening one PGlite data directory.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import os from 'node:os';
import { StoreError } from './database.js';

/** The holder refreshes the lock file's mtime this often. */
export const LOCK_HEARTBEAT_MS = 10_000;
/**
 * A lock not refreshed for this long is stale whoever wrote it: this covers a holder on another host (a pod
 * rescheduled onto a new node after a crash) and PID reuse (a container's PID 1 after a restart).
 */
export const LOCK_STALE_MS = 45_000;

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

function heartbeatAgeMs(lockPath: string, nowMs: number): number {
  try {
    return nowMs - statSync(lockPath).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * Takes the lock for `program` (e.g. "chorus-speech") and refreshes it every LOCK_HEARTBEAT_MS until released.
 * An existing lock is honoured while its heartbeat is fresh and (on this host) its process lives; otherwise it
 * is stale and replaced. A held lock makes this throw StoreError('data_dir_locked') whose message names the
 * owner and what to do.
 */
export function acquireDataDirLock(dataDir: string, program: string, nowMs: () => number = Date.now): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const lockPath = `${dataDir}/store.lock`;
  const me: LockOwner = { pid: process.pid, host: os.hostname(), program };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const fd = openSync(lockPath, 'wx', 0o644);
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      const timer = setInterval(() => {
        try {
          const now = new Date(nowMs());
          utimesSync(lockPath, now, now);
        } catch {
          // The file was removed from outside; nothing sensible to do but keep running.
        }
      }, LOCK_HEARTBEAT_MS);
      timer.unref();
      let released = false;
      return {
        path: lockPath,
        release() {
          if (released) return;
          released = true;
          clearInterval(timer);
          const owner = readOwner(lockPath);
          if (owner !== null && owner.pid === me.pid && owner.host === me.host) rmSync(lockPath, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = readOwner(lockPath);
    const fresh = heartbeatAgeMs(lockPath, nowMs()) < LOCK_STALE_MS;
    const held = owner !== null && fresh && (owner.host !== me.host || isAlive(owner.pid));
    if (held) {
      throw new StoreError(
        'data_dir_locked',
        `the data directory ${dataDir} is in use by ${owner.program} (pid ${owner.pid} on ${owner.host}); ` +
          'stop it first, or set DATABASE_URL so that both use PostgreSQL',
      );
    }
    // A half-written lock (no owner yet) gets one more look before it is treated as stale.
    if (owner === null && fresh && attempt === 0) continue;
    rmSync(lockPath, { force: true });
  }
  throw new StoreError('data_dir_locked', `could not take the lock ${lockPath}`);
}
