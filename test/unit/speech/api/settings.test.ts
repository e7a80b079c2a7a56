// loadSpeechSettings: defaults, each variable, one-line errors.
import { expect } from 'chai';
import { loadSpeechSettings, SettingsError } from '../../../../speech/settings.js';
import { checkSynthesisModel } from '../../../../speech/models/index.js';
import { resolveApiVersion } from '../../../../speech/api/request-context.js';

describe('speech settings', () => {
  it('has the documented defaults', () => {
    const s = loadSpeechSettings({}, '/srv');
    expect(s).to.deep.include({
      port: 8000,
      host: '0.0.0.0',
      databaseUrl: null,
      dataDir: '/srv/data',
      engineUrl: null,
      ratelimitGrpcUrl: null,
      logLevel: 'info',
      logFormat: 'text',
    });
    expect(s.engineWorkers).to.be.at.least(1);
  });

  it('reads every variable', () => {
    const s = loadSpeechSettings(
      {
        PORT: '9001',
        HOST: '127.0.0.1',
        DATABASE_URL: 'postgresql://u:p@db:5432/speech',
        DATA_DIR: '/var/lib/chorus',
        ENGINE_URL: 'engine:9000',
        ENGINE_WORKERS: '3',
        RATELIMIT_GRPC_URL: 'localhost:8081',
        LOG_LEVEL: 'DEBUG',
        LOG_FORMAT: 'json',
      },
      '/srv',
    );
    expect(s).to.deep.equal({
      port: 9001,
      host: '127.0.0.1',
      databaseUrl: 'postgresql://u:p@db:5432/speech',
      dataDir: '/var/lib/chorus',
      engineUrl: 'engine:9000',
      engineWorkers: 3,
      ratelimitGrpcUrl: 'localhost:8081',
      logLevel: 'debug',
      logFormat: 'json',
    });
  });

  it('accepts the engine URL spellings the remote engine client takes', () => {
    for (const url of [
      'engine:9000',
      'grpc://engine:9000',
      'http://10.0.0.1:9000/',
      'dns:///engine.ns.svc:9000',
      'unix:/run/e.sock',
    ]) {
      expect(loadSpeechSettings({ ENGINE_URL: url }).engineUrl).to.equal(url);
    }
  });

  it('rejects bad values with one-line messages naming the variable', () => {
    const bad: Record<string, string>[] = [
      { PORT: '80a' },
      { PORT: '70000' },
      { DATABASE_URL: 'mysql://x' },
      { DATABASE_URL: 'not a url' },
      { ENGINE_URL: 'no-port' },
      { ENGINE_URL: 'grpc://engine' },
      { ENGINE_WORKERS: '0' },
      { RATELIMIT_GRPC_URL: 'http://x' },
      { LOG_LEVEL: 'loud' },
      { LOG_FORMAT: 'xml' },
    ];
    for (const env of bad) {
      const name = Object.keys(env)[0] ?? '';
      try {
        loadSpeechSettings(env);
        expect.fail(`${name} accepted`);
      } catch (err) {
        expect(err, name).to.be.instanceOf(SettingsError);
        expect((err as SettingsError).variable).to.equal(name);
        expect((err as Error).message)
          .to.match(new RegExp(`^${name}`))
          .and.not.contain('\n');
      }
    }
  });
});

describe('speech API versions and model rules', () => {
  it('resolves Tts-Version', () => {
    expect(resolveApiVersion(undefined)).to.deep.equal({ version: '2026-09-13', legacy: false });
    expect(resolveApiVersion('2026-09-13')).to.deep.equal({ version: '2026-09-13', legacy: false });
    expect(resolveApiVersion('2025-05-01')).to.deep.equal({ version: '2025-05-01', legacy: true });
    expect(resolveApiVersion('2030-01-01')).to.deep.equal({ version: '2026-09-13', legacy: false });
    expect(resolveApiVersion('2026-9-13')).to.equal(null);
    expect(resolveApiVersion('2026-02-29')).to.equal(null);
  });

  it('checks model, route, voice and language in order', () => {
    const en = { voiceLocale: 'en-US', voiceModels: ['tts-3.0', 'tts-3.2', 'tts-english', 'tts-multilingual'] };
    const de = { voiceLocale: 'de-DE', voiceModels: ['tts-3.0', 'tts-multilingual'] };
    const kind = (r: ReturnType<typeof checkSynthesisModel>) => (r.ok ? `ok:${r.language}` : r.rejection.kind);
    expect(kind(checkSynthesisModel({ modelId: 'tts-3.0', route: 'speech', ...de }))).to.equal('ok:de-DE');
    expect(kind(checkSynthesisModel({ modelId: 'tts-3.0', route: 'speech', ...en, language: 'fr-FR' }))).to.equal(
      'ok:fr-FR',
    );
    expect(kind(checkSynthesisModel({ modelId: 'tts-3.0', route: 'speech', ...en, language: 'en-AU' }))).to.equal(
      'ok:en-AU',
    );
    expect(kind(checkSynthesisModel({ modelId: 'tts-3.2', route: 'speech', ...de }))).to.equal('unsupported_language');
    expect(kind(checkSynthesisModel({ modelId: 'tts-3.2', route: 'speech', ...en, language: 'es-ES' }))).to.equal(
      'unsupported_language',
    );
    expect(kind(checkSynthesisModel({ modelId: 'tts-3.0', route: 'speech', ...en, language: 'ja-JP' }))).to.equal(
      'unsupported_language',
    );
    expect(kind(checkSynthesisModel({ modelId: 'tts-english', route: 'stream-with-timestamps', ...en }))).to.equal(
      'speech_marks_unsupported',
    );
    expect(kind(checkSynthesisModel({ modelId: 'tts-dialogue-1', route: 'speech', ...en }))).to.equal(
      'unsupported_model',
    );
    expect(kind(checkSynthesisModel({ modelId: 'nope', route: 'speech', ...en }))).to.equal('unknown_model');
    expect(
      kind(
        checkSynthesisModel({ modelId: 'tts-3.2', route: 'stream', voiceLocale: 'en-US', voiceModels: ['tts-3.0'] }),
      ),
    ).to.equal('unsupported_model');
  });
});
