// Converts the typed faults of other layers (SSML, format, engine, encoder, store, cursor, body parser) to SpeechError.
import { EncoderError } from '../audio/encoder.js';
import { FormatError } from '../audio/formats.js';
import { EngineError } from '../engine/engine.js';
import { SsmlError } from '../engine/ssml.js';
import { StoreError } from '../store/index.js';
import { CursorError } from '../voices/index.js';
import { SpeechError, validationError } from './speech-error.js';

/** Body-parser errors carry an HTTP-ish `type`. */
function bodyParserError(err: unknown): SpeechError | null {
  if (typeof err !== 'object' || err === null) return null;
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.parse.failed') return validationError({ body: 'the body is not valid JSON' });
  if (type === 'entity.too.large') return new SpeechError('payload_too_large', 'the request body is too large');
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    return new SpeechError('unsupported_media_type', 'the body must be UTF-8 JSON');
  }
  return null;
}

/** The SpeechError to answer for `err`; unknown faults become `internal` (the caller logs them). */
export function toSpeechError(err: unknown): SpeechError {
  if (err instanceof SpeechError) return err;
  if (err instanceof SsmlError) return validationError({ input: err.message }, `invalid SSML: ${err.message}`);
  if (err instanceof FormatError) {
    if (err.code === 'unsupported_media_type') return new SpeechError('unsupported_media_type', err.message);
    return validationError({ [err.field]: err.message });
  }
  if (err instanceof CursorError) return validationError({ cursor: err.message });
  if (err instanceof EngineError) {
    if (err.code === 'overloaded' || err.code === 'unavailable') {
      return new SpeechError('engine_unavailable', `the synthesis engine is ${err.code}; retry shortly`, undefined, {
        'Retry-After': '1',
      });
    }
    return new SpeechError('internal', 'synthesis failed');
  }
  if (err instanceof EncoderError) return new SpeechError('internal', 'audio encoding failed');
  if (err instanceof StoreError) return new SpeechError('internal', 'the store is unavailable');
  return bodyParserError(err) ?? new SpeechError('internal', 'internal error');
}
