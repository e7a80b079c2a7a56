// A real PostgreSQL 15 server in a temp dir on a free loopback port, for store and gateway integration tests.
import { execFileSync } from 'node:child_process';
import { accessSync, chmodSync, chownSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from './ports.js';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PostgresServer {
  readonly port: number;
  /** postgres://…@127.0.0.1:port/postgres */
  readonly url: string;
  /** Creates a fresh database and returns its URL (one per test suite keeps suites independent). */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

interface RunAs {
  readonly uid: number;
  readonly gid: number;
  readonly user: string;
}

// postgres refuses to run as root; when the tests run as root, run it as the `postgres` system user.
function runAsUser(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    return { uid, gid, user: 'postgres' };
  } catch {
    throw new Error(
      'running as root and there is no `postgres` user: install postgresql (make deps) or run as non-root',
    );
  }
}

function pgBinary(name: string): string {
  const file = path.join(PG_BIN, name);
  try {
    accessSync(file, constants.X_OK);
  } catch {
    throw new Error(`${file} not found: install PostgreSQL 15 (apt-get install -y postgresql) or set PG_BIN`);
  }
  return file;
}

function run(file: string, args: readonly string[], runAs: RunAs | null): string {
  try {
    return execFileSync(file, [...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(runAs === null ? {} : { uid: runAs.uid, gid: runAs.gid }),
      env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
    }).toString();
  } catch (err) {
    const e = err as { stderr?: Buffer; stdout?: Buffer; message: string };
    throw new Error(
      `${path.basename(file)} failed: ${e.message}\n${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`,
      {
        cause: err,
      },
    );
  }
}

/** initdb + pg_ctl start on a free port (unix socket in the temp dir); stop() shuts it down and removes the dir. */
export async function startPostgresServer(): Promise<PostgresServer> {
  const initdb = pgBinary('initdb');
  const pgCtl = pgBinary('pg_ctl');
  const runAs = runAsUser();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-pg-'));
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  if (runAs !== null) {
    chownSync(dir, runAs.uid, runAs.gid);
    chmodSync(dir, 0o700);
  }
  const password = 'chorus-test';
  const pwFile = path.join(dir, 'pw');
  writeFileSync(pwFile, password);
  if (runAs !== null) chownSync(pwFile, runAs.uid, runAs.gid);
  run(
    initdb,
    ['-D', dataDir, '-U', 'chorus', '--auth=scram-sha-256', `--pwfile=${pwFile}`, '-E', 'UTF8', '--locale=C'],
    runAs,
  );
  const port = await freePort();
  const options = [
    `-p ${port}`,
    '-h 127.0.0.1',
    `-k ${dir}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=40',
    '-c shared_buffers=16MB',
  ].join(' ');
  run(pgCtl, ['-D', dataDir, '-l', logFile, '-o', options, '-w', '-t', '30', 'start'], runAs);
  await waitForPort(port);
  const base = `postgres://chorus:${password}@127.0.0.1:${port}`;
  let stopped = false;
  return {
    port,
    url: `${base}/postgres`,
    async createDatabase(name) {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: `${base}/postgres` });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await client.end();
      }
      return `${base}/${name}`;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        run(pgCtl, ['-D', dataDir, '-m', 'fast', '-w', '-t', '30', 'stop'], runAs);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
