// A tiny deterministic SpeechEngine for routing tests: a tone per word, one mark per word, sentence spans.
import {
  EngineError,
  type EngineEvent,
  type SpeechEngine,
  type SynthesisInput,
} from '../../../../speech/engine/engine.js';
import { parseSpeechInput } from '../../../../speech/engine/ssml.js';

export interface FakeEngineOptions {
  /** Throw this after the first audio chunk (a mid-stream failure). */
  readonly failAfterFirstChunk?: EngineError;
  /** Throw this before any event (e.g. overloaded). */
  readonly failAtStart?: EngineError;
  /** Wait this long before each word (to exercise keepalives). */
  readonly delayPerWordMs?: number;
  /** Called with every input the engine receives. */
  readonly onInput?: (input: SynthesisInput) => void;
}

export const FAKE_RATE = 22050;
export const FAKE_WORD_MS = 200;

export interface FakeEngine extends SpeechEngine {
  /** Every input received, in order. */
  readonly inputs: SynthesisInput[];
  /** Replaces the behaviour for the following syntheses. */
  configure(options: FakeEngineOptions): void;
}

export function createFakeEngine(initial: FakeEngineOptions = {}): FakeEngine {
  const inputs: SynthesisInput[] = [];
  let options = initial;
  return {
    inputs,
    configure(next) {
      options = next;
    },
    async *synthesize(input: SynthesisInput): AsyncGenerator<EngineEvent> {
      inputs.push(input);
      options.onInput?.(input);
      if (options.failAtStart !== undefined) throw options.failAtStart;
      const parsed = parseSpeechInput(input.text);
      const samplesPerWord = (FAKE_RATE * FAKE_WORD_MS) / 1000;
      let t = 0;
      for (const [i, word] of parsed.words.entries()) {
        if (input.signal?.aborted === true) throw new EngineError('aborted', 'aborted');
        if (options.delayPerWordMs !== undefined) await new Promise((r) => setTimeout(r, options.delayPerWordMs));
        const pcm = new Int16Array(samplesPerWord);
        for (let s = 0; s < pcm.length; s += 1)
          pcm[s] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * s) / FAKE_RATE));
        yield { type: 'audio', pcm, sampleRate: FAKE_RATE };
        if (i === 0 && options.failAfterFirstChunk !== undefined) throw options.failAfterFirstChunk;
        yield {
          type: 'marks',
          marks: [
            {
              type: 'word',
              value: word.value,
              start: word.start,
              end: word.end,
              start_time: t,
              end_time: t + FAKE_WORD_MS - 20,
            },
          ],
        };
        t += FAKE_WORD_MS;
      }
      let w = 0;
      for (const sentence of parsed.sentences) {
        const startTime = w * FAKE_WORD_MS;
        w += sentence.wordCount;
        yield {
          type: 'sentence',
          start: sentence.start,
          end: sentence.end,
          start_time: startTime,
          end_time: w * FAKE_WORD_MS,
        };
      }
    },
    async ready() {},
    async close() {},
  };
}
