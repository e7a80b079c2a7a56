// Typed faults of other layers map to one API error code each; statuses come from the single table.
import { expect } from 'chai';
import { toSpeechError } from '../../../../speech/api/error-conversion.js';
import { errorEnvelope } from '../../../../speech/api/error-handler.js';
import { allErrorCodes, httpStatusOf, SpeechError, validationError } from '../../../../speech/api/speech-error.js';
import { EncoderError } from '../../../../speech/audio/encoder.js';
import { FormatError } from '../../../../speech/audio/formats.js';
import { EngineError } from '../../../../speech/engine/engine.js';
import { SsmlError } from '../../../../speech/engine/ssml.js';
import { StoreError } from '../../../../speech/store/index.js';
import { CursorError } from '../../../../speech/voices/index.js';

describe('speech API: error conversion', () => {
  it('maps every foreign fault to its code and status', () => {
    const cases: [unknown, string, number][] = [
      [new SsmlError('unclosed <prosody>', 17), 'validation_failed', 400],
      [new FormatError('validation_failed', 'unknown output_format', 'output_format'), 'validation_failed', 400],
      [new FormatError('unsupported_media_type', 'cannot make video/mp4', 'Accept'), 'unsupported_media_type', 415],
      [new CursorError('tampered'), 'validation_failed', 400],
      [new EngineError('overloaded', 'queue full'), 'engine_unavailable', 503],
      [new EngineError('unavailable', 'down'), 'engine_unavailable', 503],
      [new EngineError('internal', 'crash'), 'internal', 500],
      [new EncoderError('encoder_failed', 'ffmpeg died'), 'internal', 500],
      [new StoreError('unavailable', 'ECONNREFUSED'), 'internal', 500],
      [Object.assign(new Error('bad json'), { type: 'entity.parse.failed' }), 'validation_failed', 400],
      [Object.assign(new Error('big'), { type: 'entity.too.large' }), 'payload_too_large', 413],
      [new TypeError('oops'), 'internal', 500],
      ['a string', 'internal', 500],
    ];
    for (const [err, code, status] of cases) {
      const converted = toSpeechError(err);
      expect([converted.code, converted.status], String(err)).to.deep.equal([code, status]);
    }
    expect(toSpeechError(new SsmlError('unclosed <prosody>', 17)).fields).to.deep.equal({
      input: 'unclosed <prosody> (at character 17)',
    });
    expect(toSpeechError(new FormatError('validation_failed', 'no', 'audio_format')).fields).to.have.property(
      'audio_format',
    );
    expect(toSpeechError(new EngineError('overloaded', 'x')).headers).to.deep.equal({ 'Retry-After': '1' });
    // Internal details never reach the client.
    expect(toSpeechError(new StoreError('unavailable', 'password=secret')).message).not.to.contain('secret');
  });

  it('keeps fields only on validation_failed in the envelope', () => {
    expect(errorEnvelope(validationError({ input: 'too long' }), 'r1')).to.deep.equal({
      error: { code: 'validation_failed', message: 'input: too long', request_id: 'r1', fields: { input: 'too long' } },
    });
    expect(errorEnvelope(new SpeechError('not_found', 'voice "x" not found', { id: 'ignored' }), 'r2')).to.deep.equal({
      error: { code: 'not_found', message: 'voice "x" not found', request_id: 'r2' },
    });
  });

  it('has one status per code, all 4xx/5xx', () => {
    for (const [code, status] of allErrorCodes()) {
      expect(httpStatusOf(code)).to.equal(status);
      expect(status).to.be.within(400, 599);
    }
    expect(httpStatusOf('speech_marks_unsupported')).to.equal(400);
    expect(httpStatusOf('consent_challenge_expired')).to.equal(410);
  });
});
