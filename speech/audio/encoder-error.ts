// The typed failure of an audio encoder.

export type EncoderErrorCode = 'encoder_unavailable' | 'encoder_failed' | 'aborted' | 'bad_input';

export class EncoderError extends Error {
  constructor(
    readonly code: EncoderErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EncoderError';
  }
}
