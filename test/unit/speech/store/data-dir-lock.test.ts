// The PGlite data-directory lock: held while fresh and alive, stale after a crash, a reboot or on another host.
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StoreError } from '../../../../speech/store/index.js';
import { acquireDataDirLock, LOCK_STALE_MS } from '../../../../speech/store/data-dir-lock.js';

describe('speech store: data directory lock', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-lockfile-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const writeLock = (owner: object, ageMs: number): void => {
    const file = path.join(dir, 'store.lock');
    writeFileSync(file, JSON.stringify(owner));
    const then = new Date(Date.now() - ageMs);
    utimesSync(file, then, then);
  };
  const refused = (): StoreError => {
    try {
      acquireDataDirLock(dir, 'second').release();
    } catch (err) {
      expect(err).to.be.instanceOf(StoreError);
      return err as StoreError;
    }
    expect.fail('the lock was taken');
  };

  it('writes the owner, refuses a second taker, and is removed on release', () => {
    const lock = acquireDataDirLock(dir, 'chorus-speech');
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).to.deep.include({ pid: process.pid, program: 'chorus-speech' });
    const err = refused();
    expect(err.code).to.equal('data_dir_locked');
    expect(err.message).to.contain(`in use by chorus-speech (pid ${process.pid} on ${os.hostname()})`);
    lock.release();
    lock.release();
    expect(existsSync(lock.path)).to.equal(false);
  });

  it('replaces a lock of a dead process on this host', () => {
    writeLock({ pid: 2 ** 22 + 12345, host: os.hostname(), program: 'chorus-speech' }, 0);
    acquireDataDirLock(dir, 'new').release();
  });

  it('honours a fresh lock from another host, and replaces it once its heartbeat is stale', () => {
    writeLock({ pid: 1, host: 'some-other-pod', program: 'chorus-speech' }, 1000);
    expect(refused().message).to.contain('pid 1 on some-other-pod');
    writeLock({ pid: 1, host: 'some-other-pod', program: 'chorus-speech' }, LOCK_STALE_MS + 1000);
    acquireDataDirLock(dir, 'new').release();
  });

  it('treats a stale lock naming a live pid (PID reuse after a restart) as stale, and garbage as stale', () => {
    writeLock({ pid: process.pid, host: os.hostname(), program: 'chorus-speech' }, LOCK_STALE_MS + 1000);
    acquireDataDirLock(dir, 'new').release();
    writeFileSync(path.join(dir, 'store.lock'), 'not json');
    acquireDataDirLock(dir, 'new').release();
  });
});
