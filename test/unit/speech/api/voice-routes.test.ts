// Voice catalog routes: list shape, filters before pagination, cursors, get/delete/sample across workspaces.
import { expect } from 'chai';
import { createVoiceRepository } from '../../../../speech/store/index.js';
import { startPostgresServer, type PostgresServer } from '../../../support/postgres-server.js';
import { createFakeEngine } from './fake-engine.js';
import { errorOf, get, startTestGateway, type TestGateway } from './test-gateway.js';

interface VoiceJson {
  id: string;
  display_name: string;
  type: string;
  gender: string;
  locale: string;
  models: { name: string; languages: { locale: string }[] }[];
  avatar_image: string | null;
  created_at: string;
}
interface VoiceList {
  voices: VoiceJson[];
  has_more: boolean;
  next_cursor: string | null;
}

for (const driver of ['PGlite', 'PostgreSQL'] as const) {
  describe(`speech API: voices and models (${driver})`, function () {
    this.timeout(60_000);
    let t: TestGateway;
    let pg: PostgresServer | undefined;
    let other: { workspaceId: string; key: string };
    let mineIds: string[] = [];
    let theirsId = '';

    const addPersonal = async (
      workspaceId: string,
      name: string,
      locale = 'en-US',
      gender: 'male' | 'female' = 'female',
    ) =>
      createVoiceRepository(t.gateway.database).insertPersonal({
        workspaceId,
        displayName: name,
        gender,
        locale,
        models: locale.startsWith('en')
          ? ['tts-3.0', 'tts-3.2', 'tts-english', 'tts-multilingual']
          : ['tts-3.0', 'tts-multilingual'],
        profile: { espeakVoice: 'en-us+f2' },
        sample: Buffer.from('RIFF-fake-sample'),
        sampleMediaType: 'audio/wav',
        createdByKeyId: 'key_x',
      });

    before(async () => {
      if (driver === 'PostgreSQL') pg = await startPostgresServer();
      t = await startTestGateway({
        engine: createFakeEngine(),
        ...(pg === undefined ? {} : { databaseUrl: await pg.createDatabase('voices') }),
      });
      other = await t.otherWorkspace('other');
      for (let i = 0; i < 5; i += 1)
        mineIds.push((await addPersonal(t.defaultWorkspaceId, `Mine ${i}`, i % 2 === 0 ? 'en-US' : 'de-DE')).id);
      mineIds = mineIds.reverse();
      theirsId = (await addPersonal(other.workspaceId, 'Theirs')).id;
    });
    after(async () => {
      await t?.close();
      await pg?.stop();
    });

    const list = async (query: string, key = t.ownerKey): Promise<VoiceList> => {
      const res = await get(`${t.url}/v1/voices${query}`, key);
      expect(res.status, query).to.equal(200);
      return (await res.json()) as VoiceList;
    };

    it('lists shared voices by name, then own personal voices newest first, in one response without limit', async () => {
      const body = await list('');
      expect(body.has_more).to.equal(false);
      expect(body.next_cursor).to.equal(null);
      const shared = body.voices.filter((v) => v.type === 'shared');
      expect(shared.length).to.be.at.least(20);
      expect(shared.map((v) => v.display_name)).to.deep.equal(
        [...shared.map((v) => v.display_name)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
      );
      const personal = body.voices.filter((v) => v.type === 'personal');
      expect(personal.map((v) => v.id)).to.deep.equal(mineIds);
      expect(body.voices.map((v) => v.id)).not.to.include(theirsId);
      const locales = new Set(shared.map((v) => v.locale));
      for (const l of ['en-US', 'en-GB', 'de-DE', 'es-ES', 'es-MX', 'fr-FR', 'it-IT', 'pt-BR'])
        expect(locales).to.include(l);
      for (const l of locales) {
        const genders = new Set(shared.filter((v) => v.locale === l).map((v) => v.gender));
        expect([...genders].sort(), l).to.deep.equal(['female', 'male']);
      }
      const henry = shared.find((v) => v.id === 'henry');
      expect(henry).to.deep.include({
        display_name: 'Henry',
        type: 'shared',
        gender: 'male',
        locale: 'en-US',
        avatar_image: null,
      });
      expect(henry?.models.map((m) => m.name)).to.deep.equal(['tts-3.0', 'tts-3.2', 'tts-english', 'tts-multilingual']);
      expect(henry?.models[0]?.languages).to.deep.equal([{ locale: 'en-US' }]);
    });

    it('pages with limit and cursor without duplicates or gaps while voices are being created', async () => {
      const all = (await list('')).voices.map((v) => v.id);
      const seen: string[] = [];
      const page = async () => {
        let cursor: string | null = null;
        for (let guard = 0; guard < 100; guard += 1) {
          const result: VoiceList = await list(
            `?limit=3${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
          );
          expect(result.voices.length).to.be.at.most(3);
          seen.push(...result.voices.map((v) => v.id));
          if (!result.has_more) {
            expect(result.next_cursor).to.equal(null);
            return;
          }
          cursor = result.next_cursor;
        }
        expect.fail('pagination did not end');
      };
      // Another client creates voices while this one pages through the list.
      const create = async () => {
        for (let i = 0; i < 12; i += 1) await addPersonal(t.defaultWorkspaceId, `Concurrent ${i}`);
      };
      await Promise.all([page(), create()]);
      expect(new Set(seen).size, 'duplicates').to.equal(seen.length);
      for (const id of all) expect(seen, 'gap').to.include(id);
    });

    it('applies filters before pagination', async () => {
      const de = await list('?locale=DE&limit=2');
      expect(de.voices).to.have.length(2);
      expect(de.voices.every((v) => v.locale === 'de-DE')).to.equal(true);
      expect(de.has_more).to.equal(true);
      const rest = await list(`?locale=DE&limit=200&cursor=${encodeURIComponent(de.next_cursor ?? '')}`);
      const allDe = await list('?locale=de');
      expect([...de.voices, ...rest.voices].map((v) => v.id)).to.deep.equal(allDe.voices.map((v) => v.id));
      expect((await list('?locale=en-gb')).voices.map((v) => v.locale)).to.satisfy((ls: string[]) =>
        ls.every((l) => l === 'en-GB'),
      );
      expect((await list('?locale=e')).voices).to.have.length(0);
      expect((await list('?type=personal')).voices.map((v) => v.id).slice(-5)).to.deep.equal(mineIds);
      expect(
        (await list('?type=shared&gender=male')).voices.every((v) => v.type === 'shared' && v.gender === 'male'),
      ).to.equal(true);
      const english32 = await list('?model=tts-3.2');
      expect(english32.voices.length).to.be.greaterThan(0);
      expect(english32.voices.every((v) => v.locale.startsWith('en-'))).to.equal(true);
    });

    it('rejects bad parameters and tampered or re-filtered cursors', async () => {
      const page = await list('?limit=3&locale=en');
      const cursor = page.next_cursor ?? '';
      const bad: [string, string][] = [
        ['?limit=0', 'limit'],
        ['?limit=201', 'limit'],
        ['?limit=abc', 'limit'],
        ['?type=robot', 'type'],
        ['?gender=x', 'gender'],
        ['?locale=en_US', 'locale'],
        ['?model=tts-9', 'model'],
        ['?limit=3&limit=4', 'limit'],
        [
          `?limit=3&locale=en&cursor=${encodeURIComponent(cursor.slice(0, -2) + (cursor.endsWith('AA') ? 'BB' : 'AA'))}`,
          'cursor',
        ],
        [`?limit=3&locale=de&cursor=${encodeURIComponent(cursor)}`, 'cursor'],
        ['?cursor=garbage', 'cursor'],
      ];
      for (const [query, field] of bad) {
        const { status, body } = await errorOf(await get(`${t.url}/v1/voices${query}`, t.ownerKey));
        expect([status, body.error.code], query).to.deep.equal([400, 'validation_failed']);
        expect(body.error.fields, query).to.have.property(field);
      }
      // The same cursor from another workspace is refused too.
      const { status } = await errorOf(
        await get(`${t.url}/v1/voices?limit=3&locale=en&cursor=${encodeURIComponent(cursor)}`, other.key),
      );
      expect(status).to.equal(400);
    });

    it('gets shared and own voices; another workspace’s voice is an identical 404', async () => {
      expect((await (await get(`${t.url}/v1/voices/olivia`, t.ownerKey)).json()) as VoiceJson).to.include({
        id: 'olivia',
      });
      const own = await get(`${t.url}/v1/voices/${mineIds[0]}`, t.ownerKey);
      expect(((await own.json()) as VoiceJson).type).to.equal('personal');
      const theirs = await errorOf(await get(`${t.url}/v1/voices/${theirsId}`, t.ownerKey, { 'x-request-id': 'same' }));
      const unknown = await errorOf(
        await get(`${t.url}/v1/voices/${theirsId.replace(/.$/, 'q')}`, t.ownerKey, { 'x-request-id': 'same' }),
      );
      expect(theirs.status).to.equal(404);
      expect(theirs.body.error.code).to.equal('not_found');
      expect(theirs.body.error.message.replace(theirsId, 'ID')).to.equal(
        unknown.body.error.message.replace(/voice_\w+/, 'ID'),
      );
      const sample = await get(`${t.url}/v1/voices/${mineIds[0]}/sample`, t.ownerKey);
      expect(sample.status).to.equal(200);
      expect(sample.headers.get('content-type')).to.equal('audio/wav');
      expect(Buffer.from(await sample.arrayBuffer()).toString()).to.equal('RIFF-fake-sample');
      expect((await get(`${t.url}/v1/voices/${theirsId}/sample`, t.ownerKey)).status).to.equal(404);
      expect((await get(`${t.url}/v1/voices/olivia/sample`, t.ownerKey)).status).to.equal(404);
    });

    it('deletes own personal voices only', async () => {
      const del = (id: string, key = t.ownerKey) =>
        fetch(`${t.url}/v1/voices/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
      expect((await del(theirsId)).status).to.equal(404);
      expect((await errorOf(await del('olivia'))).body.error.code).to.equal('forbidden');
      const victim = mineIds[mineIds.length - 1] ?? '';
      const res = await del(victim);
      expect(res.status).to.equal(204);
      expect(await res.text()).to.equal('');
      expect((await del(victim)).status).to.equal(404);
      expect((await get(`${t.url}/v1/voices/${victim}`, t.ownerKey)).status).to.equal(404);
      expect((await get(`${t.url}/v1/voices/${theirsId}`, other.key)).status).to.equal(200);
    });

    it('returns the model catalog', async () => {
      const res = await get(`${t.url}/v1/audio/models`, t.ownerKey);
      expect(res.status).to.equal(200);
      const body = (await res.json()) as {
        models: Record<string, unknown>[];
        dialogue_models: Record<string, unknown>[];
      };
      expect(body.models.map((m) => m.id)).to.deep.equal(['tts-3.0', 'tts-3.2', 'tts-english', 'tts-multilingual']);
      expect(body.models.filter((m) => m.default === true).map((m) => m.id)).to.deep.equal(['tts-3.0']);
      const byId = Object.fromEntries(body.models.map((m) => [m.id, m]));
      expect(byId['tts-3.0']).to.deep.include({
        voices: 'all',
        speech_marks: true,
        deprecated: false,
        streaming: true,
      });
      expect(byId['tts-3.0']?.routes).to.deep.equal(['speech', 'stream', 'stream-with-timestamps']);
      expect(byId['tts-english']?.routes).to.deep.equal(['speech', 'stream']);
      expect(byId['tts-multilingual']).to.deep.include({ deprecated: true, speech_marks: false });
      const v32 = byId['tts-3.2']?.voices as string[];
      expect(v32).to.include('henry').and.not.include('lena');
      expect(byId['tts-3.2']?.languages).to.deep.equal(['en-US', 'en-GB']);
      expect(body.dialogue_models.map((m) => m.id)).to.deep.equal(['tts-dialogue-1']);
      expect(body.dialogue_models[0]?.routes).to.deep.equal(['dialogue']);
      for (const m of [...body.models, ...body.dialogue_models]) {
        expect(Object.keys(m).sort()).to.deep.equal([
          'default',
          'deprecated',
          'id',
          'languages',
          'routes',
          'speech_marks',
          'streaming',
          'voices',
        ]);
      }
    });

    it('answers health, readiness, metrics and unknown paths', async () => {
      expect(await (await fetch(`${t.url}/healthz`)).json()).to.deep.equal({ status: 'ok' });
      expect(await (await fetch(`${t.url}/readyz`)).json()).to.deep.equal({
        status: 'ready',
        checks: { store: 'ok', engine: 'ok' },
      });
      const metrics = await fetch(`${t.url}/metrics`);
      expect(metrics.headers.get('content-type')).to.contain('text/plain');
      expect(await metrics.text()).to.match(
        /chorus_speech_http_requests_total\{method="GET",route="\/v1\/voices",status="200"\}/,
      );
      const missing = await errorOf(await get(`${t.url}/v1/nothing`, t.ownerKey));
      expect([missing.status, missing.body.error.code]).to.deep.equal([404, 'not_found']);
    });
  });
}

describe('speech API: store outage (PostgreSQL stopped)', function () {
  this.timeout(60_000);
  it('answers /readyz 503 and API calls with the 500 envelope, fast', async () => {
    const pg = await startPostgresServer();
    const t = await startTestGateway({ engine: createFakeEngine(), databaseUrl: await pg.createDatabase('outage') });
    try {
      await pg.stop();
      const ready = await fetch(`${t.url}/readyz`);
      expect(ready.status).to.equal(503);
      expect(((await ready.json()) as { checks: { store: string } }).checks.store).not.to.equal('ok');
      const res = await get(`${t.url}/v1/voices`, t.ownerKey, { 'x-request-id': 'outage-1' });
      const { status, body } = await errorOf(res);
      expect([status, body.error.code, body.error.request_id]).to.deep.equal([500, 'internal', 'outage-1']);
      expect((await fetch(`${t.url}/healthz`)).status).to.equal(200);
    } finally {
      await t.close();
      await pg.stop();
    }
  });
});
