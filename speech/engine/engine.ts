// The synthesis engine contract shared by the in-process espeak pool, the gRPC engine client and the gateway.

/** How a voice sounds: an espeak voice plus optional prosody offsets derived from the catalog or a cloned sample. */
export interface VoiceProfile {
  /** espeak-ng voice name with optional variant, e.g. `en-us+f3`. */
  readonly espeakVoice: string;
  /** Speaking rate in percent of the voice's normal rate (100 = unchanged). */
  readonly ratePercent?: number;
  /** Base pitch in percent of the voice's normal pitch (100 = unchanged). */
  readonly pitchPercent?: number;
  /** Pitch range in percent of the voice's normal range (100 = unchanged). */
  readonly pitchRangePercent?: number;
}

/** One synthesis request as the engine receives it. */
export interface SynthesisInput {
  /** The input as sent by the client: plain text, or SSML when it starts with `<speak`. Offsets refer to it. */
  readonly text: string;
  /** Language tag `xx-XX`; selects the espeak language when it differs from the voice's. */
  readonly language: string;
  readonly voice: VoiceProfile;
  /** Model id the request was made for (`tts-3.2` gets the smallest first audio chunk). */
  readonly modelId: string;
  /**
   * Sample rate in Hz of the audio events; undefined means the engine's native rate (22,050 Hz for espeak). The
   * engine resamples off the caller's thread (in its workers, or on the engine server), so a gateway can ask for
   * its output format's rate. An integer in 8,000-48,000, else the iterator throws `EngineError` `internal`.
   * Marks and sentence times are in ms and do not depend on it.
   */
  readonly sampleRate?: number;
  /** Aborting stops synthesis; the iterator then throws an `EngineError` with code `aborted`. */
  readonly signal?: AbortSignal;
}

/** One word of the input and where it is in the audio. */
export interface WordMark {
  readonly type: 'word';
  /** The word as written in the input, with SSML entities decoded (`&amp;` becomes `&`). */
  readonly value: string;
  /** Unicode code-point offset into `SynthesisInput.text`, inclusive. */
  readonly start: number;
  /** Unicode code-point offset into `SynthesisInput.text`, exclusive. */
  readonly end: number;
  /** Milliseconds from the start of the synthesis. */
  readonly start_time: number;
  /** Milliseconds from the start of the synthesis; `end_time >= start_time`. */
  readonly end_time: number;
}

/**
 * What a synthesis yields, in order. Audio chunks are consecutive PCM (mono s16, native byte order), every one at
 * the input's `sampleRate` when it is given; `marks` events carry word marks as soon as they are final (each word
 * exactly once, in input order, non-overlapping, within the audio produced so far or by the end); `sentence`
 * events carry the span (code points) and times of one sentence once it is complete.
 */
export type EngineEvent =
  | { readonly type: 'audio'; readonly pcm: Int16Array; readonly sampleRate: number }
  | { readonly type: 'marks'; readonly marks: readonly WordMark[] }
  | {
      readonly type: 'sentence';
      readonly start: number;
      readonly end: number;
      readonly start_time: number;
      readonly end_time: number;
    };

export interface SpeechEngine {
  /**
   * Streams one synthesis. Throws (from the iterator) `SsmlError` for invalid SSML, `EngineError` with code
   * `aborted` when the signal fires, `overloaded` when the queue is full, `unavailable` when the engine is down.
   * Breaking out of the loop early cancels the synthesis.
   */
  synthesize(input: SynthesisInput): AsyncIterable<EngineEvent>;
  /** Resolves once the engine can synthesise (workers loaded / server reachable); rejects with `EngineError`. */
  ready(): Promise<void>;
  /** Stops workers or connections; pending syntheses fail with `unavailable`. Idempotent. */
  close(): Promise<void>;
}

export type EngineErrorCode = 'aborted' | 'overloaded' | 'unavailable' | 'internal';

/** A synthesis that could not run or finish. The gateway maps `overloaded`/`unavailable` to 503. */
export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EngineError';
  }
}
