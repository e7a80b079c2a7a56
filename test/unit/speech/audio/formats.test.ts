import { expect } from 'chai';
import { FormatError, listOutputFormats, resolveOutputFormat } from '../../../../speech/audio/formats.js';

function failure(fn: () => unknown): FormatError {
  try {
    fn();
  } catch (err) {
    if (err instanceof FormatError) return err;
    throw err;
  }
  throw new Error('expected a FormatError');
}

describe('resolveOutputFormat', () => {
  it('uses the route defaults', () => {
    expect(resolveOutputFormat({ route: 'speech' }).id).to.equal('wav_24000');
    expect(resolveOutputFormat({ route: 'stream' }).id).to.equal('mp3_24000_128');
    const sse = resolveOutputFormat({ route: 'stream-with-timestamps' });
    expect(sse.id).to.equal('pcm_24000');
    expect(sse.contentType).to.equal('audio/L16; rate=24000; channels=1');
  });

  it('lets output_format win over audio_format and Accept', () => {
    const f = resolveOutputFormat({
      outputFormat: 'ulaw_8000',
      audioFormat: 'mp3',
      accept: 'audio/ogg',
      route: 'stream',
    });
    expect(f).to.include({ codec: 'ulaw', sampleRate: 8000, contentType: 'audio/basic', container: 'raw' });
  });

  it('parses every listed output_format', () => {
    for (const id of listOutputFormats())
      expect(resolveOutputFormat({ outputFormat: id, route: 'speech' }).id).to.equal(id);
    expect(resolveOutputFormat({ outputFormat: 'mp3_22050_32', route: 'stream' })).to.include({ bitrateKbps: 32 });
  });

  it('maps audio_format values', () => {
    const expected: Record<string, string> = {
      wav: 'wav_24000',
      mp3: 'mp3_24000_128',
      ogg: 'ogg_24000',
      aac: 'aac_24000',
      flac: 'flac_24000',
      pcm: 'pcm_24000',
      ulaw: 'ulaw_8000',
      alaw: 'alaw_8000',
    };
    for (const [name, id] of Object.entries(expected)) {
      const f = resolveOutputFormat({ audioFormat: name, route: 'speech' });
      expect(f.id).to.equal(id);
      expect(f.audioFormat).to.equal(name);
    }
  });

  it('maps Accept on streaming routes, with q-values and wildcards', () => {
    expect(resolveOutputFormat({ accept: 'audio/pcm', route: 'stream' }).contentType).to.equal(
      'audio/L16; rate=24000; channels=1',
    );
    expect(resolveOutputFormat({ accept: 'audio/basic', route: 'stream' }).id).to.equal('ulaw_8000');
    expect(resolveOutputFormat({ accept: 'audio/ogg;q=0.5, audio/aac', route: 'stream' }).id).to.equal('aac_24000');
    expect(resolveOutputFormat({ accept: 'text/html, audio/mpeg;q=0.2', route: 'stream' }).id).to.equal(
      'mp3_24000_128',
    );
    expect(resolveOutputFormat({ accept: '*/*', route: 'stream' }).id).to.equal('mp3_24000_128');
    expect(resolveOutputFormat({ accept: 'audio/*', route: 'stream-with-timestamps' }).id).to.equal('pcm_24000');
    expect(resolveOutputFormat({ accept: 'audio/mpeg', route: 'speech' }).id).to.equal('wav_24000');
  });

  it('answers unsupported_media_type when no Accept type can be produced', () => {
    const err = failure(() => resolveOutputFormat({ accept: 'audio/wav, video/mp4', route: 'stream' }));
    expect(err.code).to.equal('unsupported_media_type');
    expect(err.field).to.equal('Accept');
    expect(failure(() => resolveOutputFormat({ accept: 'audio/mpeg;q=0', route: 'stream' })).code).to.equal(
      'unsupported_media_type',
    );
  });

  it('refuses wav on streaming routes', () => {
    for (const route of ['stream', 'stream-with-timestamps'] as const) {
      expect(failure(() => resolveOutputFormat({ outputFormat: 'wav_24000', route })).field).to.equal('output_format');
      expect(failure(() => resolveOutputFormat({ audioFormat: 'wav', route })).field).to.equal('audio_format');
    }
  });

  it('rejects unknown values with validation_failed and the field', () => {
    for (const bad of [
      'mp3',
      'pcm_12345',
      'mp3_24000_100',
      'mp3_44100_128',
      'ulaw_16000',
      'opus_24000',
      'pcm_16000_1',
      '',
      'pcm_016000',
    ]) {
      const err = failure(() => resolveOutputFormat({ outputFormat: bad, route: 'speech' }));
      expect(err.code, bad).to.equal('validation_failed');
      expect(err.field).to.equal('output_format');
    }
    expect(failure(() => resolveOutputFormat({ audioFormat: 'MP3', route: 'speech' })).field).to.equal('audio_format');
  });
});
