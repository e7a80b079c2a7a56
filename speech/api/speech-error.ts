// The gateway's typed API error and the ONE table that maps its codes to HTTP statuses (spec A.1).

export type SpeechErrorCode =
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'validation_failed'
  | 'unsupported_model'
  | 'unsupported_language'
  | 'speech_marks_unsupported'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'idempotency_conflict'
  | 'rate_limited'
  | 'consent_challenge_not_found'
  | 'consent_challenge_expired'
  | 'consent_challenge_used'
  | 'sample_length_invalid'
  | 'consent_recording_length_invalid'
  | 'consent_phrase_mismatch'
  | 'consent_speaker_mismatch'
  | 'engine_unavailable'
  | 'internal';

const STATUS: Readonly<Record<SpeechErrorCode, number>> = {
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  validation_failed: 400,
  unsupported_model: 400,
  unsupported_language: 400,
  speech_marks_unsupported: 400,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_conflict: 409,
  rate_limited: 429,
  consent_challenge_not_found: 404,
  consent_challenge_expired: 410,
  consent_challenge_used: 409,
  sample_length_invalid: 422,
  consent_recording_length_invalid: 422,
  consent_phrase_mismatch: 422,
  consent_speaker_mismatch: 422,
  engine_unavailable: 503,
  internal: 500,
};

/** The HTTP status of an error code; the only place where statuses are decided. */
export function httpStatusOf(code: SpeechErrorCode): number {
  return STATUS[code];
}

/** Every error code with its status, for the OpenAPI document and the docs. */
export function allErrorCodes(): readonly (readonly [SpeechErrorCode, number])[] {
  return Object.entries(STATUS) as [SpeechErrorCode, number][];
}

/** A request the gateway answers with the error envelope. `fields` only for `validation_failed`. */
export class SpeechError extends Error {
  constructor(
    readonly code: SpeechErrorCode,
    message: string,
    /** Request field path → what is wrong with it. */
    readonly fields?: Readonly<Record<string, string>>,
    /** Extra response headers (e.g. Retry-After on 429). */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
    this.name = 'SpeechError';
  }

  get status(): number {
    return httpStatusOf(this.code);
  }
}

/** Shorthand for a 400 `validation_failed` naming the fields at fault. */
export function validationError(fields: Readonly<Record<string, string>>, message?: string): SpeechError {
  const first = Object.entries(fields)[0];
  return new SpeechError(
    'validation_failed',
    message ?? (first === undefined ? 'the request is invalid' : `${first[0]}: ${first[1]}`),
    fields,
  );
}
