// The store contract (migrations, workspaces, keys, voices, pagination, restart) against PGlite and PostgreSQL.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  StoreError,
  createApiKeyRepository,
  createConsentRepository,
  createIdempotencyRepository,
  createVoiceRepository,
  createWorkspaceRepository,
  currentSchemaVersion,
  loadOrCreateSecret,
  openDatabase,
  runMigrations,
  type Database,
  type StoreLocation,
  type VoicePosition,
  type VoiceRecord,
} from '../../../../speech/store/index.js';
import { allMigrations } from '../../../../speech/store/migrations/index.js';
import { sharedVoiceSeeds } from '../../../../speech/voices/index.js';
import { startPostgresServer, type PostgresServer } from '../../../support/postgres-server.js';

interface Driver {
  readonly name: string;
  /** A location for a brand-new, empty store. */
  fresh(): Promise<StoreLocation>;
  cleanup(): Promise<void>;
}

function pgliteDriver(): Driver {
  const dirs: string[] = [];
  return {
    name: 'PGlite',
    async fresh() {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-store-'));
      dirs.push(dir);
      return { databaseUrl: null, dataDir: dir };
    },
    async cleanup() {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}

function postgresDriver(): Driver {
  let server: PostgresServer | undefined;
  let n = 0;
  return {
    name: 'PostgreSQL',
    async fresh() {
      server ??= await startPostgresServer();
      n += 1;
      return { databaseUrl: await server.createDatabase(`store_${n}`), dataDir: '/nonexistent' };
    },
    async cleanup() {
      await server?.stop();
    },
  };
}

function personal(workspaceId: string, name: string) {
  return {
    workspaceId,
    displayName: name,
    gender: 'female' as const,
    locale: 'en-US',
    models: ['tts-3.0'],
    profile: { espeakVoice: 'en-us+f2' },
    sample: new Uint8Array([1, 2, 3, 4]),
    sampleMediaType: 'audio/wav',
    createdByKeyId: 'key_test',
  };
}

for (const makeDriver of [pgliteDriver, postgresDriver]) {
  const driver = makeDriver();
  describe(`speech store contract (${driver.name})`, function () {
    this.timeout(60_000);
    let location: StoreLocation;
    let db: Database;

    before(async () => {
      location = await driver.fresh();
      db = await openDatabase(location, 'store-test');
    });
    after(async () => {
      await db?.close();
      await driver.cleanup();
    });

    it('applies every migration once, in order, and records them', async () => {
      expect(await currentSchemaVersion(db)).to.equal(allMigrations.length);
      expect(await runMigrations(db)).to.deep.equal([]);
      const rows = await db.query('SELECT version, name FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).to.deep.equal(allMigrations.map((m) => m.version));
    });

    it('rolls a failing migration back completely', async () => {
      const bad = {
        version: 999,
        name: 'bad',
        statements: ['CREATE TABLE half_done (x int)', 'SELECT nonsense FROM nowhere'],
      };
      try {
        await runMigrations(db, [...allMigrations, bad]);
        expect.fail('should throw');
      } catch (err) {
        expect(err).to.be.instanceOf(StoreError);
        expect((err as StoreError).code).to.equal('migration_failed');
      }
      expect(await currentSchemaVersion(db)).to.equal(allMigrations.length);
      const tables = await db.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'`);
      expect(tables).to.have.length(0);
    });

    it('creates workspaces, members and keys; names are unique', async () => {
      const ws = createWorkspaceRepository(db);
      const keys = createApiKeyRepository(db);
      const a = await ws.create('acme');
      expect(a.id).to.match(/^ws_[a-z2-7]{20}$/);
      try {
        await ws.create('acme');
        expect.fail('duplicate name accepted');
      } catch (err) {
        expect((err as StoreError).code).to.equal('unique_violation');
      }
      const m = await ws.addMember(a.id, 'ann@example.com', 'viewer');
      expect((await ws.getMember(m.id))?.role).to.equal('viewer');
      const k = await keys.insert({
        workspaceId: a.id,
        memberId: m.id,
        serviceAccount: null,
        prefix: 'abcdefghijkl',
        secretSha256: 'ab'.repeat(32),
        scopes: ['audio', 'voices'],
      });
      expect(k.memberRole).to.equal('viewer');
      expect(k.scopes).to.deep.equal(['audio', 'voices']);
      const found = await keys.findByPrefix('abcdefghijkl');
      expect(found?.id).to.equal(k.id);
      expect(found?.revokedAt).to.equal(null);
      expect(await keys.revoke(k.id)).to.equal(true);
      expect(await keys.revoke(k.id)).to.equal(false);
      expect((await keys.findByPrefix('abcdefghijkl'))?.revokedAt).to.be.instanceOf(Date);
      expect(await keys.listByWorkspace(a.id)).to.have.length(1);
    });

    it('keeps a key for either a member or a service account, never both', async () => {
      const ws = await createWorkspaceRepository(db).create('both');
      const m = await createWorkspaceRepository(db).addMember(ws.id, 'b@example.com', 'owner');
      try {
        await createApiKeyRepository(db).insert({
          workspaceId: ws.id,
          memberId: m.id,
          serviceAccount: 'ci',
          prefix: 'bbbbbbbbbbbb',
          secretSha256: 'cd'.repeat(32),
          scopes: ['audio'],
        });
        expect.fail('accepted');
      } catch (err) {
        expect(err).to.be.instanceOf(StoreError);
      }
    });

    it('syncs the shared catalog idempotently', async () => {
      const voices = createVoiceRepository(db);
      const seeds = sharedVoiceSeeds();
      await voices.syncSharedVoices(seeds);
      await voices.syncSharedVoices(seeds);
      const ws = await createWorkspaceRepository(db).create('sync');
      const all = await voices.listVisible(ws.id, {}, null, null);
      expect(all.map((v) => v.id)).to.have.members(seeds.map((s) => s.id));
      expect(all).to.have.length(seeds.length);
    });

    it('hides personal voices from other workspaces and deletes only own ones', async () => {
      const ws = createWorkspaceRepository(db);
      const voices = createVoiceRepository(db);
      const mine = await ws.create('mine');
      const theirs = await ws.create('theirs');
      const v = await voices.insertPersonal(personal(mine.id, 'Clone'));
      expect(v.type).to.equal('personal');
      expect((await voices.findVisible(v.id, mine.id))?.displayName).to.equal('Clone');
      expect(await voices.findVisible(v.id, theirs.id)).to.equal(null);
      expect(await voices.findSample(v.id, theirs.id)).to.equal(null);
      const sample = await voices.findSample(v.id, mine.id);
      expect([...(sample?.bytes ?? [])]).to.deep.equal([1, 2, 3, 4]);
      expect(sample?.mediaType).to.equal('audio/wav');
      expect(await voices.deletePersonal(v.id, theirs.id)).to.equal(false);
      expect(await voices.deletePersonal('olivia', mine.id)).to.equal(false);
      expect(await voices.deletePersonal(v.id, mine.id)).to.equal(true);
      expect(await voices.findVisible(v.id, mine.id)).to.equal(null);
    });

    it('filters before paginating and pages without duplicates or gaps under concurrent inserts', async () => {
      const voices = createVoiceRepository(db);
      const ws = await createWorkspaceRepository(db).create('paging');
      for (let i = 0; i < 7; i += 1) await voices.insertPersonal(personal(ws.id, `P${i}`));
      const before = await voices.listVisible(ws.id, {}, null, null);
      const seen: VoiceRecord[] = [];
      let after: VoicePosition | null = null;
      let inserted = 0;
      for (;;) {
        const page = await voices.listVisible(ws.id, {}, after, 4);
        seen.push(...page);
        // Another client creates voices between our page requests.
        if (inserted < 3) {
          await voices.insertPersonal(personal(ws.id, `New${inserted}`));
          inserted += 1;
        }
        if (page.length < 4) break;
        const last = page[page.length - 1] as VoiceRecord;
        after =
          last.type === 'shared'
            ? { section: 'shared', displayName: last.displayName, id: last.id }
            : { section: 'personal', seq: last.seq };
      }
      const ids = seen.map((v) => v.id);
      expect(new Set(ids).size).to.equal(ids.length);
      for (const v of before) expect(ids).to.include(v.id);
      const shared = before.filter((v) => v.type === 'shared').map((v) => v.displayName);
      expect(shared).to.deep.equal([...shared].sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1)));
      const personalSeqs = before.filter((v) => v.type === 'personal').map((v) => v.seq);
      expect(personalSeqs).to.deep.equal([...personalSeqs].sort((a, b) => b - a));
      expect(before.findIndex((v) => v.type === 'personal')).to.equal(before.filter((v) => v.type === 'shared').length);

      const german = await voices.listVisible(ws.id, { localeRange: 'de' }, null, 2);
      expect(german).to.have.length(2);
      expect(german.every((v) => v.locale === 'de-DE')).to.equal(true);
      const maleEnGb = await voices.listVisible(ws.id, { localeRange: 'en-gb', gender: 'male' }, null, null);
      expect(maleEnGb.map((v) => v.id)).to.deep.equal(['oliver']);
      const only32 = await voices.listVisible(ws.id, { model: 'tts-3.2', type: 'shared' }, null, null);
      expect(only32.every((v) => v.locale.startsWith('en-'))).to.equal(true);
      expect(await voices.listVisible(ws.id, { localeRange: 'e' }, null, null)).to.have.length(0);
    });

    it('keeps one server secret per name', async () => {
      const a = await loadOrCreateSecret(db, 'cursor');
      const b = await loadOrCreateSecret(db, 'cursor');
      expect(a.equals(b)).to.equal(true);
      expect(a.length).to.equal(32);
    });

    it('keeps data across a restart', async () => {
      const ws = await createWorkspaceRepository(db).create('durable');
      await db.close();
      db = await openDatabase(location, 'store-test');
      expect((await createWorkspaceRepository(db).get(ws.id))?.name).to.equal('durable');
      expect(await runMigrations(db)).to.deep.equal([]);
    });

    it('lets exactly one of many concurrent requests claim an idempotency key, then replays its response', async () => {
      const ws = await createWorkspaceRepository(db).create('idem');
      const repo = createIdempotencyRepository(db);
      const scope = { workspaceId: ws.id, route: 'POST /v1/voices', key: 'k-1' };
      const timing = { nowMs: 1_000_000, replayWindowMs: 86_400_000, inFlightLeaseMs: 300_000 };
      const claims = await Promise.all(Array.from({ length: 8 }, () => repo.claim(scope, 'hash-a', timing)));
      expect(claims.filter((c) => c.kind === 'claimed')).to.have.length(1);
      expect(claims.filter((c) => c.kind === 'conflict' && c.reason === 'in_flight')).to.have.length(7);
      await repo.complete(scope, 201, Buffer.from('{"id":"voice_1"}'), 'application/json');
      const replay = await repo.claim(scope, 'hash-a', { ...timing, nowMs: timing.nowMs + 1000 });
      expect(replay.kind).to.equal('replay');
      if (replay.kind === 'replay') {
        expect([replay.statusCode, replay.body.toString(), replay.mediaType]).to.deep.equal([
          201,
          '{"id":"voice_1"}',
          'application/json',
        ]);
      }
      expect(await repo.claim(scope, 'hash-b', timing)).to.deep.equal({
        kind: 'conflict',
        reason: 'different_request',
      });
      // Another workspace and another route are other scopes.
      expect(
        (await repo.claim({ ...scope, route: 'POST /v1/voices/consent-challenges' }, 'hash-b', timing)).kind,
      ).to.equal('claimed');
      // After the replay window the key is free again.
      const later = { ...timing, nowMs: timing.nowMs + timing.replayWindowMs + 1 };
      expect((await repo.claim(scope, 'hash-b', later)).kind).to.equal('claimed');
      // A claim left in flight by a dead replica is taken over after the lease; a released one at once.
      const stuck = { ...scope, key: 'k-2' };
      expect((await repo.claim(stuck, 'h', timing)).kind).to.equal('claimed');
      expect((await repo.claim(stuck, 'h', { ...timing, nowMs: timing.nowMs + 1000 })).kind).to.equal('conflict');
      expect((await repo.claim(stuck, 'h', { ...timing, nowMs: timing.nowMs + timing.inFlightLeaseMs })).kind).to.equal(
        'claimed',
      );
      await repo.release(stuck);
      expect((await repo.claim(stuck, 'h2', timing)).kind).to.equal('claimed');
      expect(await repo.purgeExpired(timing.nowMs + 2 * timing.replayWindowMs + 2)).to.be.at.least(3);
    });

    it('uses a consent challenge once, only in its workspace, only before it expires; records outlive voices', async () => {
      const workspaces = createWorkspaceRepository(db);
      const ws = await workspaces.create('consent');
      const otherWs = await workspaces.create('consent-other');
      const consent = createConsentRepository(db);
      const now = 5_000_000;
      const make = () =>
        consent.createChallenge({
          workspaceId: ws.id,
          fullName: 'Ada Lovelace',
          phrase: 'I consent. River candle seven.',
          createdByKeyId: 'key_x',
          nowMs: now,
          ttlMs: 600_000,
        });
      const c = await make();
      expect(c.id).to.match(/^cc_/);
      expect(c.expiresAt.getTime() - c.createdAt.getTime()).to.equal(600_000);
      expect(await consent.consumeChallenge(c.id, otherWs.id, now + 1)).to.deep.equal({ kind: 'not_found' });
      expect(await consent.consumeChallenge('cc_unknown', ws.id, now + 1)).to.deep.equal({ kind: 'not_found' });
      const results = await Promise.all([1, 2, 3, 4].map(() => consent.consumeChallenge(c.id, ws.id, now + 1)));
      expect(results.filter((r) => r.kind === 'consumed')).to.have.length(1);
      expect(results.filter((r) => r.kind === 'used')).to.have.length(3);
      const late = await make();
      expect(await consent.consumeChallenge(late.id, ws.id, now + 600_000)).to.deep.equal({ kind: 'expired' });

      const voices = createVoiceRepository(db);
      const voice = await voices.insertPersonal(personal(ws.id, 'Ada'));
      await consent.insertRecord({
        workspaceId: ws.id,
        challengeId: c.id,
        voiceId: voice.id,
        fullName: 'Ada Lovelace',
        phrase: c.phrase,
        recording: new Uint8Array([9, 9]),
        recordingMediaType: 'audio/wav',
        phraseScore: 0.91,
        speakerScore: 0.87,
        outcome: 'verified',
        createdByKeyId: 'key_x',
      });
      expect(await voices.deletePersonal(voice.id, ws.id)).to.equal(true);
      expect((await consent.findRecordVoice(c.id))?.voiceId).to.equal(voice.id);
    });

    it('runs a transaction atomically', async () => {
      try {
        await db.transaction(async (tx) => {
          await createWorkspaceRepository(tx).create('rolled-back');
          throw new Error('boom');
        });
      } catch (err) {
        expect((err as Error).message).to.equal('boom');
      }
      const names = (await createWorkspaceRepository(db).list()).map((w) => w.name);
      expect(names).not.to.include('rolled-back');
    });
  });
}

describe('speech store: PGlite data directory lock', function () {
  this.timeout(60_000);
  it('refuses a second opener while the first holds the directory, and allows it after close', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-lock-'));
    try {
      const first = await openDatabase({ databaseUrl: null, dataDir: dir }, 'chorus-speech');
      try {
        await openDatabase({ databaseUrl: null, dataDir: dir }, 'chorus-speech-admin');
        expect.fail('second open succeeded');
      } catch (err) {
        expect(err).to.be.instanceOf(StoreError);
        expect((err as StoreError).code).to.equal('data_dir_locked');
        expect((err as Error).message).to.contain(`chorus-speech (pid ${process.pid}`);
      }
      await first.close();
      const second = await openDatabase({ databaseUrl: null, dataDir: dir }, 'chorus-speech-admin');
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails fast with StoreError when PostgreSQL is unreachable', async () => {
    try {
      await openDatabase({ databaseUrl: 'postgres://x:y@127.0.0.1:1/db', dataDir: '/nonexistent' }, 't');
      expect.fail('opened');
    } catch (err) {
      expect(err).to.be.instanceOf(StoreError);
      expect((err as StoreError).code).to.equal('unavailable');
    }
  });
});
