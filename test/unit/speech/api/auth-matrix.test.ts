// Who may call what: missing/bad/revoked keys, scopes, roles and content.manage, service accounts (spec A.1).
import { expect } from 'chai';
import { createApiKeyRepository, createVoiceRepository } from '../../../../speech/store/index.js';
import { apiKeyPrefix } from '../../../../speech/auth/index.js';
import { createFakeEngine } from './fake-engine.js';
import { errorOf, startTestGateway, type TestGateway } from './test-gateway.js';

describe('speech API: authentication and authorisation matrix', function () {
  this.timeout(30_000);
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway({ engine: createFakeEngine() });
  });
  after(async () => {
    await t?.close();
  });

  const newVoice = async () =>
    (
      await createVoiceRepository(t.gateway.database).insertPersonal({
        workspaceId: t.defaultWorkspaceId,
        displayName: 'Temp',
        gender: 'male',
        locale: 'en-US',
        models: ['tts-3.0'],
        profile: {},
        sample: Buffer.from('x'),
        sampleMediaType: 'audio/wav',
        createdByKeyId: 'key_x',
      })
    ).id;

  const call = async (
    key: string | null,
    op: 'speech' | 'list' | 'get' | 'sample' | 'delete' | 'models',
    voiceId = 'henry',
  ) => {
    const headers: Record<string, string> =
      key === null ? {} : { authorization: key.startsWith('RAW:') ? key.slice(4) : `Bearer ${key}` };
    switch (op) {
      case 'speech':
        return fetch(`${t.url}/v1/audio/speech`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ input: 'hi', voice_id: 'henry', audio_format: 'pcm' }),
        });
      case 'list':
        return fetch(`${t.url}/v1/voices`, { headers });
      case 'get':
        return fetch(`${t.url}/v1/voices/${voiceId}`, { headers });
      case 'sample':
        return fetch(`${t.url}/v1/voices/${voiceId}/sample`, { headers });
      case 'models':
        return fetch(`${t.url}/v1/audio/models`, { headers });
      case 'delete':
        return fetch(`${t.url}/v1/voices/${voiceId}`, { method: 'DELETE', headers });
    }
  };

  it('answers 401 unauthenticated for missing, malformed, unknown and revoked keys', async () => {
    const valid = await t.key('owner', ['audio', 'voices', 'voices:write']);
    const keys = createApiKeyRepository(t.gateway.database);
    const revokedKey = await t.key('owner', ['audio']);
    const record = await keys.findByPrefix(apiKeyPrefix(revokedKey) ?? '');
    await keys.revoke(record?.id ?? '');
    const wrongSecret = valid.slice(0, -4) + (valid.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (const key of [null, 'RAW:Basic abc', 'RAW:Bearer', 'not-a-key', wrongSecret, revokedKey]) {
      for (const op of ['speech', 'list', 'models'] as const) {
        const res = await call(key, op);
        const { status, body } = await errorOf(res);
        expect([status, body.error.code], `${String(key)} ${op}`).to.deep.equal([401, 'unauthenticated']);
        expect(res.headers.get('www-authenticate')).to.match(/^Bearer/);
      }
    }
    expect((await call(valid, 'speech')).status).to.equal(200);
  });

  it('checks scopes and the content.manage permission', async () => {
    type Row = [
      role: 'owner' | 'admin' | 'member' | 'viewer' | 'service-account',
      scopes: ('audio' | 'voices' | 'voices:write')[],
      expected: Record<string, number>,
    ];
    const matrix: Row[] = [
      [
        'owner',
        ['audio', 'voices', 'voices:write'],
        { speech: 200, list: 200, get: 200, sample: 200, models: 200, delete: 204 },
      ],
      [
        'admin',
        ['voices', 'voices:write'],
        { speech: 403, list: 200, get: 200, sample: 200, models: 200, delete: 204 },
      ],
      ['member', ['voices', 'voices:write'], { speech: 403, list: 200, delete: 204 }],
      ['member', ['audio', 'voices'], { speech: 200, list: 200, delete: 403 }],
      ['viewer', ['audio', 'voices', 'voices:write'], { speech: 200, list: 200, get: 200, sample: 200, delete: 403 }],
      ['viewer', [], { speech: 403, list: 403, get: 403, sample: 403, models: 200, delete: 403 }],
      ['service-account', ['voices:write'], { speech: 403, list: 403, delete: 204 }],
      ['service-account', ['audio'], { speech: 200, list: 403, delete: 403 }],
    ];
    for (const [role, scopes, expected] of matrix) {
      const key = await t.key(role, scopes);
      for (const [op, status] of Object.entries(expected)) {
        const voiceId = op === 'speech' || op === 'list' || op === 'models' ? 'henry' : await newVoice();
        const res = await call(key, op as 'speech', voiceId);
        expect(res.status, `${role} [${scopes.join(',')}] ${op}`).to.equal(status);
        if (status === 403) expect((await errorOf(res)).body.error.code).to.equal('forbidden');
      }
    }
  });
});
