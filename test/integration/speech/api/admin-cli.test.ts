// chorus-speech-admin end to end: commands, output, exit codes, the PGlite lock, and keys that work on the gateway.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runAdmin } from '../../../../speech/cli/admin.js';
import { createFakeEngine } from '../../../unit/speech/api/fake-engine.js';
import { startTestGateway, type TestGateway } from '../../../unit/speech/api/test-gateway.js';
import { startPostgresServer, type PostgresServer } from '../../../support/postgres-server.js';

const REPO = path.resolve(import.meta.dirname, '../../../..');

interface Run {
  readonly code: number;
  readonly out: string[];
  readonly err: string[];
}

async function admin(env: Record<string, string>, ...argv: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, env, { stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, out, err };
}

describe('chorus-speech-admin', function () {
  this.timeout(120_000);
  let dataDir: string;
  let env: Record<string, string>;
  before(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'chorus-admin-'));
    env = { DATA_DIR: dataDir };
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs as a program: stdout for results, stderr and exit 2 for usage errors', () => {
    const tsx = path.join(REPO, 'node_modules/.bin/tsx');
    const ok = spawnSync(tsx, ['speech/cli/admin.ts', 'workspace', 'create', 'from-binary'], {
      cwd: REPO,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
      encoding: 'utf8',
    });
    expect(ok.status, ok.stderr).to.equal(0);
    expect(ok.stdout.trim()).to.match(/^ws_[a-z2-7]{20}$/);
    expect(ok.stderr).to.equal('');
    const bad = spawnSync(tsx, ['speech/cli/admin.ts', 'key', 'create', '--workspace', 'x', '--scopes', 'audio'], {
      cwd: REPO,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
      encoding: 'utf8',
    });
    expect(bad.status).to.equal(2);
    expect(bad.stdout).to.equal('');
    expect(bad.stderr).to.contain('give exactly one of --member ID or --service-account NAME');
  });

  it('creates workspaces, members and keys, lists and revokes them', async () => {
    const ws = await admin(env, 'workspace', 'create', 'acme');
    expect(ws.code).to.equal(0);
    const workspaceId = ws.out[0] ?? '';
    expect((await admin(env, 'workspace', 'list')).out.some((l) => l.startsWith(`${workspaceId}\tacme\t`))).to.equal(
      true,
    );
    const dup = await admin(env, 'workspace', 'create', 'acme');
    expect([dup.code, dup.err[0]]).to.deep.equal([1, 'chorus-speech-admin: a workspace named "acme" already exists']);

    const member = await admin(
      env,
      'member',
      'add',
      '--workspace',
      workspaceId,
      '--email',
      'ann@example.com',
      '--role',
      'admin',
    );
    expect(member.code).to.equal(0);
    expect(member.out).to.have.length(1);
    const memberId = member.out[0] ?? '';
    expect(memberId).to.match(/^mem_/);
    expect(
      (await admin(env, 'member', 'add', '--workspace', workspaceId, '--email', 'x@y.z', '--role', 'boss')).code,
    ).to.equal(2);
    expect(
      (await admin(env, 'member', 'add', '--workspace', 'ws_nope', '--email', 'x@y.z', '--role', 'viewer')).code,
    ).to.equal(1);

    const key = await admin(
      env,
      'key',
      'create',
      '--workspace',
      workspaceId,
      '--member',
      memberId,
      '--scopes',
      'audio,voices',
    );
    expect(key.code).to.equal(0);
    const last = key.out[key.out.length - 1] ?? '';
    expect(last).to.match(/^chs_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/);
    const sa = await admin(
      env,
      'key',
      'create',
      '--workspace',
      workspaceId,
      '--service-account',
      'ci',
      '--scopes',
      'voices:write',
    );
    expect(sa.code).to.equal(0);
    const bogus = await admin(
      env,
      'key',
      'create',
      '--workspace',
      workspaceId,
      '--service-account',
      'ci',
      '--scopes',
      'audio,root',
    );
    expect(bogus.code).to.equal(2);
    expect(bogus.err[0]).to.contain('unknown scope "root"');
    const foreign = await admin(
      env,
      'key',
      'create',
      '--workspace',
      workspaceId,
      '--member',
      'mem_other',
      '--scopes',
      'audio',
    );
    expect([foreign.code, foreign.err[0]]).to.deep.equal([
      1,
      `chorus-speech-admin: member mem_other not found in workspace ${workspaceId}`,
    ]);

    const listed = await admin(env, 'key', 'list', '--workspace', workspaceId);
    expect(listed.out).to.have.length(2);
    expect(listed.out.join('\n')).not.to.contain(last);
    const keyId = (key.out[0] ?? '').replace('key id: ', '');
    expect((await admin(env, 'key', 'revoke', keyId)).out).to.deep.equal([`revoked ${keyId}`]);
    expect((await admin(env, 'key', 'revoke', keyId)).code).to.equal(1);
    expect(
      (await admin(env, 'key', 'list', '--workspace', workspaceId)).out.find((l) => l.startsWith(keyId)),
    ).to.contain('revoked');
    expect((await admin(env, 'nonsense')).code).to.equal(2);
    expect((await admin({ DATA_DIR: dataDir, PORT: 'eighty' }, 'workspace', 'list')).code).to.equal(2);
  });

  it('refuses clearly while a gateway holds the PGlite directory', async () => {
    let gateway: TestGateway | undefined;
    try {
      gateway = await startTestGateway({ engine: createFakeEngine() });
      const held = { DATA_DIR: gateway.dataDir };
      const run = await admin(held, 'workspace', 'list');
      expect(run.code).to.equal(1);
      expect(run.err[0]).to.contain(`is in use by chorus-speech (pid ${process.pid}`);
      expect(run.err[0]).to.contain('DATABASE_URL');
    } finally {
      await gateway?.close();
    }
  });

  describe('against PostgreSQL while the gateway runs', () => {
    let pg: PostgresServer;
    let gateway: TestGateway;
    before(async () => {
      pg = await startPostgresServer();
      gateway = await startTestGateway({ engine: createFakeEngine(), databaseUrl: await pg.createDatabase('admin') });
    });
    after(async () => {
      await gateway?.close();
      await pg?.stop();
    });

    it('issues a key that the running gateway accepts at once, and revokes it', async () => {
      const pgEnv = { DATABASE_URL: gateway.databaseUrl ?? '' };
      const ws = (await admin(pgEnv, 'workspace', 'create', 'live')).out[0] ?? '';
      const key = await admin(
        pgEnv,
        'key',
        'create',
        '--workspace',
        ws,
        '--service-account',
        'bot',
        '--scopes',
        'voices',
      );
      const secret = key.out[key.out.length - 1] ?? '';
      const res = await fetch(`${gateway.url}/v1/voices?limit=1`, { headers: { authorization: `Bearer ${secret}` } });
      expect(res.status).to.equal(200);
      await admin(pgEnv, 'key', 'revoke', (key.out[0] ?? '').replace('key id: ', ''));
      expect(
        (await fetch(`${gateway.url}/v1/voices`, { headers: { authorization: `Bearer ${secret}` } })).status,
      ).to.equal(401);
    });
  });
});
