// Encoders written in TypeScript: raw s16le PCM, WAV, µ-law and A-law, each after resampling to the output rate.
import { ChunkQueue } from './chunk-queue.js';
import type { AudioEncoder } from './encoder.js';
import { EncoderError } from './encoder-error.js';
import type { OutputFormat } from './formats.js';
import { encodeAlaw, encodeMulaw } from './g711.js';
import { createResampler, type Resampler } from './resampler.js';
import { UNKNOWN_WAV_SIZE, wavHeader } from './wav-header.js';

function toBytes(pcm: Int16Array, codec: OutputFormat['codec']): Buffer {
  if (codec === 'ulaw') return encodeMulaw(pcm);
  if (codec === 'alaw') return encodeAlaw(pcm);
  // Samples are little-endian on every platform Node supports here; copy so the caller may reuse its array.
  return Buffer.from(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
}

/** PCM-family encoder; WAV buffers until `end()` unless `streamingWav`. */
export function createPcmEncoder(format: OutputFormat, streamingWav: boolean): AudioEncoder {
  const queue = new ChunkQueue<Buffer>();
  const buffered: Buffer[] = [];
  const bufferAll = format.codec === 'wav' && !streamingWav;
  let resampler: Resampler | undefined;
  let inputRate = 0;
  let closed = false;
  if (format.codec === 'wav' && streamingWav) queue.push(wavHeader(format.sampleRate, UNKNOWN_WAV_SIZE));

  const emit = (pcm: Int16Array): void => {
    if (pcm.length === 0) return;
    const bytes = toBytes(pcm, format.codec);
    if (bufferAll) buffered.push(bytes);
    else queue.push(bytes);
  };

  return {
    write(pcm, sampleRate) {
      if (closed) return;
      if (resampler === undefined) {
        resampler = createResampler(sampleRate, format.sampleRate);
        inputRate = sampleRate;
      } else if (sampleRate !== inputRate) {
        closed = true;
        queue.fail(new EncoderError('bad_input', `sample rate changed from ${inputRate} to ${sampleRate}`));
        return;
      }
      emit(resampler.process(pcm));
    },
    end() {
      if (closed) return;
      closed = true;
      if (resampler !== undefined) emit(resampler.flush());
      if (bufferAll) {
        const data = Buffer.concat(buffered);
        queue.push(wavHeader(format.sampleRate, data.length));
        if (data.length > 0) queue.push(data);
      }
      queue.end();
    },
    output: queue,
    abort() {
      if (queue.ended) return;
      closed = true;
      queue.fail(new EncoderError('aborted', 'encoder aborted'));
    },
  };
}
