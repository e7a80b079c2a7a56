// The in-process SpeechEngine: espeak-ng WebAssembly in a worker pool, streaming audio and word marks.
import os from 'node:os';
import type { Logger } from '../../sidecar/logger.js';
import { ChunkQueue } from '../audio/chunk-queue.js';
import { EngineError, type EngineEvent, type SpeechEngine, type SynthesisInput } from './engine.js';
import { parseSpeechInput } from './ssml.js';
import { espeakParameters, resolveEspeakVoice } from './voices.js';
import { planSegments, type Segment } from './segments.js';
import { WordAligner, type AlignerOutput } from './word-aligner.js';
import { WorkerPool, type JobChunk } from './worker-pool.js';

export interface EspeakEngineOptions {
  /** Worker threads; default the number of cores. */
  readonly workers?: number;
  /** Syntheses allowed to wait for a worker before `overloaded`; default 64 per worker. */
  readonly maxQueue?: number;
  readonly logger: Logger;
}

/** Models whose first audio chunk is cut small (lowest time to first byte). */
const SMALL_FIRST_CHUNK_MODELS = new Set(['tts-3.2']);
/** The first piece of audio for low-latency models. */
const SMALL_FIRST_CHUNK_MS = 20;
/** Output rates a synthesis may ask for (telephony up to studio rates). */
const MIN_SAMPLE_RATE = 8000;
const MAX_SAMPLE_RATE = 48000;
/** Input characters in the first worker job of a long plain-text synthesis (a sentence or two). */
const FIRST_SEGMENT_CHARS = 200;
/** Input characters in each later job: about a minute of audio, a few hundred ms of worker time. */
const SEGMENT_CHARS = 1000;

export function createEspeakEngine(options: EspeakEngineOptions): SpeechEngine {
  const workers = options.workers ?? Math.max(1, os.availableParallelism());
  const pool = new WorkerPool({ workers, maxQueue: options.maxQueue ?? workers * 64, logger: options.logger });

  async function* synthesize(input: SynthesisInput): AsyncGenerator<EngineEvent> {
    const outputRate = input.sampleRate;
    if (
      outputRate !== undefined &&
      !(Number.isInteger(outputRate) && outputRate >= MIN_SAMPLE_RATE && outputRate <= MAX_SAMPLE_RATE)
    ) {
      throw new EngineError(
        'internal',
        `sample rate ${outputRate} Hz is not supported (${MIN_SAMPLE_RATE}-${MAX_SAMPLE_RATE} Hz)`,
      );
    }
    const parsed = parseSpeechInput(input.text);
    const aligner = new WordAligner(parsed);
    const events = new ChunkQueue<EngineEvent>();
    const controller = new AbortController();
    const outer = input.signal;
    const forwardAbort = (): void => controller.abort();
    if (outer?.aborted === true) controller.abort();
    outer?.addEventListener('abort', forwardAbort, { once: true });
    // Native-rate samples so far: marks and segment offsets are timed on espeak's own timeline, so they do not
    // depend on the output rate (the resampled audio lags it by the filter delay until the job's flush).
    let samples = 0;
    let rate = 0;
    let split = SMALL_FIRST_CHUNK_MODELS.has(input.modelId);
    const params = espeakParameters(input.voice);
    const voice = resolveEspeakVoice(input.voice, input.language);
    const engineChars = Array.from(parsed.engineText);
    const segments = planSegments(parsed, FIRST_SEGMENT_CHARS, SEGMENT_CHARS);

    const emitAligned = (out: AlignerOutput): void => {
      if (out.marks.length > 0) events.push({ type: 'marks', marks: out.marks });
      for (const s of out.sentences) events.push({ type: 'sentence', ...s });
    };

    const runSegment = (segment: Segment, index: number): Promise<void> => {
      // espeak counts positions and time from the start of each job; shift them onto the whole input's timeline
      // (positions inside the reopened tags of an SSML piece land before it and are ignored by the aligner).
      const positionBase = segment.engineStart - Array.from(segment.prefix).length;
      const msBase = rate > 0 ? (samples * 1000) / rate : 0;
      const spec = {
        text: segment.prefix + engineChars.slice(segment.engineStart, segment.engineEnd).join('') + segment.suffix,
        voice,
        rateWpm: params.rateWpm,
        pitch: params.pitch,
        range: params.range,
        ...(outputRate === undefined ? {} : { sampleRate: outputRate }),
      };
      const sink = {
        chunk({ pcm, sampleRate, sourceSamples, sourceRate, events: raw }: JobChunk): void {
          rate = sourceRate;
          samples += sourceSamples;
          if (pcm.length > 0) {
            const firstSamples = Math.round((sampleRate * SMALL_FIRST_CHUNK_MS) / 1000);
            if (split && pcm.length > firstSamples) {
              events.push({ type: 'audio', pcm: pcm.slice(0, firstSamples), sampleRate });
              events.push({ type: 'audio', pcm: pcm.slice(firstSamples), sampleRate });
            } else events.push({ type: 'audio', pcm, sampleRate });
            split = false;
          }
          const shifted =
            index === 0
              ? raw
              : raw.map((ev) => ({
                  ...ev,
                  textPosition: Math.max(1, ev.textPosition + positionBase),
                  audioMs: ev.audioMs + msBase,
                }));
          emitAligned(aligner.push(shifted, (samples * 1000) / sourceRate));
        },
      };
      return pool.run(spec, sink, controller.signal, index > 0);
    };

    const done = (async () => {
      for (const [index, segment] of segments.entries()) await runSegment(segment, index);
    })().then(
      () => {
        emitAligned(aligner.finish(rate > 0 ? (samples * 1000) / rate : 0));
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
