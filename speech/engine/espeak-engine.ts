// The in-process SpeechEngine: espeak-ng WebAssembly in a worker pool, streaming audio and word marks.
import os from 'node:os';
import type { Logger } from '../../sidecar/logger.js';
import { ChunkQueue } from '../audio/chunk-queue.js';
import { type EngineEvent, type SpeechEngine, type SynthesisInput } from './engine.js';
import { parseSpeechInput } from './ssml.js';
import { espeakParameters, resolveEspeakVoice } from './voices.js';
import { WordAligner } from './word-aligner.js';
import { WorkerPool } from './worker-pool.js';

export interface EspeakEngineOptions {
  /** Worker threads; default the number of cores. */
  readonly workers?: number;
  /** Syntheses allowed to wait for a worker before `overloaded`; default 64 per worker. */
  readonly maxQueue?: number;
  readonly logger: Logger;
}

/** Models whose first audio chunk is cut small (lowest time to first byte). */
const SMALL_FIRST_CHUNK_MODELS = new Set(['tts-3.2']);
/** 20 ms at 22.05 kHz: the first piece of audio for low-latency models. */
const SMALL_FIRST_CHUNK_SAMPLES = 441;

export function createEspeakEngine(options: EspeakEngineOptions): SpeechEngine {
  const workers = options.workers ?? Math.max(1, os.availableParallelism());
  const pool = new WorkerPool({ workers, maxQueue: options.maxQueue ?? workers * 64, logger: options.logger });

  async function* synthesize(input: SynthesisInput): AsyncGenerator<EngineEvent> {
    const parsed = parseSpeechInput(input.text);
    const aligner = new WordAligner(parsed);
    const events = new ChunkQueue<EngineEvent>();
    const controller = new AbortController();
    const outer = input.signal;
    const forwardAbort = (): void => controller.abort();
    if (outer?.aborted === true) controller.abort();
    outer?.addEventListener('abort', forwardAbort, { once: true });
    let samples = 0;
    let rate = 0;
    let split = SMALL_FIRST_CHUNK_MODELS.has(input.modelId);
    const params = espeakParameters(input.voice);
    const done = pool
      .run(
        {
          text: parsed.engineText,
          voice: resolveEspeakVoice(input.voice, input.language),
          rateWpm: params.rateWpm,
          pitch: params.pitch,
          range: params.range,
        },
        {
          chunk(pcm, sampleRate, raw) {
            rate = sampleRate;
            if (pcm.length > 0) {
              if (split && pcm.length > SMALL_FIRST_CHUNK_SAMPLES) {
                events.push({ type: 'audio', pcm: pcm.slice(0, SMALL_FIRST_CHUNK_SAMPLES), sampleRate });
                events.push({ type: 'audio', pcm: pcm.slice(SMALL_FIRST_CHUNK_SAMPLES), sampleRate });
              } else events.push({ type: 'audio', pcm, sampleRate });
              split = false;
              samples += pcm.length;
            }
            const out = aligner.push(raw, (samples * 1000) / sampleRate);
            if (out.marks.length > 0) events.push({ type: 'marks', marks: out.marks });
            for (const s of out.sentences) events.push({ type: 'sentence', ...s });
          },
        },
        controller.signal,
      )
      .then(
        () => {
          const totalMs = rate > 0 ? (samples * 1000) / rate : 0;
          const out = aligner.finish(totalMs);
          if (out.marks.length > 0) events.push({ type: 'marks', marks: out.marks });
          for (const s of out.sentences) events.push({ type: 'sentence', ...s });
          events.end();
        },
        (err: unknown) => events.fail(err),
      );
    try {
      yield* events;
    } finally {
      outer?.removeEventListener('abort', forwardAbort);
      // Stops the worker when the consumer leaves early; a no-op after completion.
      controller.abort();
      await done;
    }
  }

  return {
    synthesize,
    ready: () => pool.ready(),
    close: () => pool.close(),
  };
}
