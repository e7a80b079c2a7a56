// Runs one synthesis: engine events in, encoded audio plus marks out, as one ordered async stream.
import { ChunkQueue } from '../audio/chunk-queue.js';
import type { AudioEncoder } from '../audio/encoder.js';
import type { OutputFormat } from '../audio/formats.js';
import type { SpeechEngine, WordMark } from '../engine/engine.js';
import type { SentenceSpan } from '../engine/mark-tree.js';
import type { SynthesisPlan } from './synthesis-plan.js';

export type SynthesisOutput =
  | { readonly type: 'audio'; readonly bytes: Buffer }
  | { readonly type: 'marks'; readonly marks: readonly WordMark[] }
  | { readonly type: 'sentence'; readonly span: SentenceSpan }
  /** Last item: total audio duration in ms, from the PCM produced (independent of codec and rate). */
  | { readonly type: 'done'; readonly audioDurationMs: number };

export type EncoderFactory = (format: OutputFormat) => AudioEncoder;

export interface SynthesisSession {
  /** Outputs in order, ending with `done`; throws the first engine or encoder failure. Iterate once. */
  readonly outputs: AsyncIterable<SynthesisOutput>;
  /** Stops the engine and the encoder (client gone). Idempotent. */
  abort(): void;
}

export function startSynthesis(
  engine: SpeechEngine,
  createEncoder: EncoderFactory,
  plan: SynthesisPlan,
): SynthesisSession {
  const controller = new AbortController();
  const queue = new ChunkQueue<SynthesisOutput>();
  const synthesis = engine.synthesize({
    text: plan.request.input,
    language: plan.language,
    voice: plan.voice,
    modelId: plan.model.id,
    // The engine resamples in its workers (or on the engine server); the encoder then only encodes.
    sampleRate: plan.format.sampleRate,
    signal: controller.signal,
  });
  const events = synthesis[Symbol.asyncIterator]();
  // The first next() submits the engine job, so the worker synthesises while the main thread creates the
  // encoder (spawning ffmpeg blocks the event loop for tens of ms in a large process).
  const first = events.next();
  let encoder: AudioEncoder;
  try {
    encoder = createEncoder(plan.format);
  } catch (err) {
    controller.abort();
    first.catch(() => undefined);
    throw err;
  }
  let durationMs = 0;
  const pump = (async () => {
    try {
      for (let next = await first; next.done !== true; next = await events.next()) {
        const event = next.value;
        if (event.type === 'audio') {
          encoder.write(event.pcm, event.sampleRate);
          durationMs += (event.pcm.length * 1000) / event.sampleRate;
        } else if (event.type === 'marks') {
          queue.push({ type: 'marks', marks: event.marks });
        } else {
          queue.push({ type: 'sentence', span: event });
        }
      }
      encoder.end();
    } catch (err) {
      // The encoder's own "aborted" must not hide the engine's reason: rethrow before the drain sees it.
      encoder.abort();
      // Like leaving a for-await loop: lets the engine release the job (a no-op once the iterator has thrown).
      events.return?.(undefined).catch(() => undefined);
      throw err;
    }
  })();
  const drain = (async () => {
    for await (const bytes of encoder.output) queue.push({ type: 'audio', bytes });
  })();
  Promise.all([pump, drain]).then(
    () => {
      queue.push({ type: 'done', audioDurationMs: Math.round(durationMs) });
      queue.end();
    },
    (err: unknown) => {
      encoder.abort();
      queue.fail(err);
    },
  );
  return {
    outputs: queue,
    abort() {
      controller.abort();
      encoder.abort();
    },
  };
}
