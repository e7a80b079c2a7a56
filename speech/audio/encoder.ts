// The streaming audio encoder contract and the factory that picks the implementation for an OutputFormat.
import type { OutputFormat } from './formats.js';
import { createFfmpegEncoder, type FfmpegEncoderOptions } from './encoder-ffmpeg.js';
import { createPcmEncoder } from './encoder-pcm.js';

export { EncoderError, type EncoderErrorCode } from './encoder-error.js';

/**
 * Turns PCM into the bytes of one output format, as a stream. `write` never blocks; bytes appear on `output` as
 * soon as the codec has them. After `end()` the output finishes; after `abort()` any child process is killed
 * and iterating `output` throws `EncoderError` `aborted`.
 */
export interface AudioEncoder {
  /** Mono signed 16-bit samples at `sampleRate` Hz (resampled to the output rate inside). Ignored after end/abort. */
  write(pcm: Int16Array, sampleRate: number): void;
  /** No more input; the output ends once everything is encoded. */
  end(): void;
  /** Encoded bytes, in order. Throws `EncoderError` if the encoder fails or is aborted. */
  readonly output: AsyncIterable<Buffer>;
  /** Stops now and releases resources. Idempotent. */
  abort(): void;
}

export interface EncoderOptions extends FfmpegEncoderOptions {
  /**
   * WAV only: stream the header first with unknown-size fields instead of buffering until `end()` to write
   * exact sizes. Default false (the /speech route wants a correct header).
   */
  readonly streamingWav?: boolean;
}

/** Creates the encoder for `format`: TypeScript for pcm/wav/µ-law/A-law, an ffmpeg process for the rest. */
export function createAudioEncoder(format: OutputFormat, options: EncoderOptions = {}): AudioEncoder {
  switch (format.codec) {
    case 'pcm':
    case 'wav':
    case 'ulaw':
    case 'alaw':
      return createPcmEncoder(format, options.streamingWav ?? false);
    case 'mp3':
    case 'opus':
    case 'aac':
    case 'flac':
      return createFfmpegEncoder(format, options);
  }
}
