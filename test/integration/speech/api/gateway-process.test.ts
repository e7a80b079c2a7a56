// chorus-speech as a process: first-start key in the log, readiness, a synthesis, the CLI refusing its data dir, SIGTERM.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from '../../../support/ports.js';
import { startProcess, type RunningProcess } from '../../../support/process.js';

const REPO = path.resolve(import.meta.dirname, '../../../..');
const TSX = path.join(REPO, 'node_modules/.bin/tsx');

describe('chorus-speech process', function () {
  this.timeout(180_000);
  let dataDir: string;
  let gateway: RunningProcess | undefined;
  let port: number;
  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'chorus-main-'));
    port = await freePort();
    gateway = startProcess(TSX, ['speech/main.ts'], {
      cwd: REPO,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        ENGINE_WORKERS: '1',
        LOG_FORMAT: 'json',
        DATABASE_URL: '',
      },
    });
    try {
      await waitForPort(port, '127.0.0.1', 90_000);
    } catch (err) {
      throw new Error(`gateway did not start: ${(err as Error).message}\n${gateway.output()}`, { cause: err });
    }
  });
  after(async () => {
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the quick-start owner key once, as JSON log lines', async () => {
    const lines = (gateway?.output() ?? '').split('\n').filter((l) => l.trim() !== '');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const p of parsed) expect(Object.keys(p)).to.include.members(['@timestamp', '@message', 'level']);
    const withKey = parsed.filter((p) => /chs_[a-z2-7]{12}_[A-Za-z0-9_-]{43}/.test(String(p['@message'])));
    expect(withKey).to.have.length(1);
    const key = /chs_[a-z2-7]{12}_[A-Za-z0-9_-]{43}/.exec(String(withKey[0]?.['@message']))?.[0] ?? '';
    // Readiness waits for the engine workers, which load after the port opens (slowly on a busy machine).
    let ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    for (let i = 0; i < 120 && ready.status !== 200; i += 1) {
      expect(ready.status).to.equal(503);
      await new Promise((r) => setTimeout(r, 500));
      ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    }
    expect(ready.status).to.equal(200);
    const res = await fetch(`http://127.0.0.1:${port}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'Hello from the process.', voice_id: 'oliver', audio_format: 'mp3' }),
    });
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { audio_format: string }).audio_format).to.equal('mp3');
  });

  it('makes the admin CLI refuse the data directory the gateway holds, naming its pid', () => {
    const run = spawnSync(TSX, ['speech/cli/admin.ts', 'workspace', 'list'], {
      cwd: REPO,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
      encoding: 'utf8',
    });
    expect(run.status).to.equal(1);
    expect(run.stdout).to.equal('');
    expect(run.stderr).to.contain(`is in use by chorus-speech (pid `);
  });

  it('stops on SIGTERM with exit code 0 and releases the directory', async () => {
    const child = gateway?.child;
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
    child?.kill('SIGTERM');
    expect(await exited).to.equal(0);
    const run = spawnSync(TSX, ['speech/cli/admin.ts', 'workspace', 'list'], {
      cwd: REPO,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^ws_\w+\tdefault\t/);
  });

  it('exits 2 with a one-line message for a bad setting', () => {
    const run = spawnSync(TSX, ['speech/main.ts'], { cwd: REPO, env: { ...process.env, PORT: 'x' }, encoding: 'utf8' });
    expect(run.status).to.equal(2);
    expect(run.stderr.trim()).to.equal('chorus-speech: PORT="x": expected an integer 0-65535');
  });
});
