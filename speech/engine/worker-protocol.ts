// Messages between the engine's worker pool and each espeak worker thread.
import type { RawEngineEvent } from './word-aligner.js';

/** Data every worker gets at start. */
export interface WorkerInit {
  /** Int32Array(1) view target: the id of a job to stop; the worker checks it in every audio callback. */
  readonly abortFlag: SharedArrayBuffer;
}

/** One synthesis for a worker. */
export interface SynthJob {
  readonly type: 'synth';
  /** Positive, unique per pool. */
  readonly id: number;
  /** SSML-safe engine text (see `ParsedInput.engineText`). */
  readonly text: string;
  /** espeak voice name with optional variant (`en-us+f3`). */
  readonly voice: string;
  readonly rateWpm: number;
  readonly pitch: number;
  readonly range: number;
  /** Output rate in Hz; the worker resamples espeak's native-rate audio to it. Undefined: native rate. */
  readonly sampleRate?: number;
}

export type WorkerReply =
  | { readonly type: 'ready'; readonly sampleRate: number }
  | {
      readonly type: 'chunk';
      readonly id: number;
      /** At the job's output rate; the resampler's filter delay makes it lag the native audio by a few samples. */
      readonly pcm: Int16Array;
      /** Native-rate samples espeak produced for this chunk: the timeline that events and marks are measured on. */
      readonly sourceSamples: number;
      readonly events: readonly RawEngineEvent[];
    }
  | { readonly type: 'done'; readonly id: number; readonly aborted: boolean }
  | { readonly type: 'error'; readonly id: number; readonly message: string }
  | { readonly type: 'fatal'; readonly message: string };
