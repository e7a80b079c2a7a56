import { expect } from 'chai';
import os from 'node:os';
import { EngineSettingsError, loadEngineServerSettings } from '../../../../speech/engine/engine-server-settings.js';

describe('loadEngineServerSettings', () => {
  it('has the documented defaults', () => {
    const s = loadEngineServerSettings({});
    expect(s).to.deep.include({ port: 9000, host: '0.0.0.0', modelIds: [], logLevel: 'info', logFormat: 'text' });
    expect(s.workers).to.equal(Math.max(1, os.availableParallelism()));
    expect(s.maxQueue).to.equal(s.workers * 64);
  });

  it('reads every variable', () => {
    const s = loadEngineServerSettings({
      PORT: '9100',
      HOST: '127.0.0.1',
      ENGINE_WORKERS: '3',
      ENGINE_MAX_QUEUE: '5',
      MODEL_ID: 'tts-3.0, tts-3.2',
      LOG_LEVEL: 'DEBUG',
      LOG_FORMAT: 'json',
    });
    expect(s).to.deep.equal({
      port: 9100,
      host: '127.0.0.1',
      workers: 3,
      maxQueue: 5,
      modelIds: ['tts-3.0', 'tts-3.2'],
      logLevel: 'debug',
      logFormat: 'json',
    });
  });

  it('names the bad variable', () => {
    const bad: Record<string, string>[] = [
      { PORT: '70000' },
      { PORT: 'x' },
      { ENGINE_WORKERS: '0' },
      { ENGINE_WORKERS: '1.5' },
      { MODEL_ID: 'TTS 3' },
      { LOG_LEVEL: 'loud' },
      { LOG_FORMAT: 'xml' },
    ];
    for (const env of bad) {
      const name = Object.keys(env)[0];
      expect(() => loadEngineServerSettings(env), name)
        .to.throw(EngineSettingsError)
        .with.property('variable', name);
    }
  });
});
