import { expect } from 'chai';
import { silentLogger } from '../../../../sidecar/logger.js';
import { createEspeakEngine } from '../../../../speech/engine/espeak-engine.js';
import {
  EngineError,
  type EngineEvent,
  type SpeechEngine,
  type SynthesisInput,
  type WordMark,
} from '../../../../speech/engine/engine.js';
import { parseSpeechInput, SsmlError } from '../../../../speech/engine/ssml.js';
import { SAMPLE_TEXT } from './sample-text.js';

interface Result {
  readonly events: EngineEvent[];
  readonly pcm: Int16Array;
  readonly marks: WordMark[];
  readonly durationMs: number;
}

function input(text: string, extra: Partial<SynthesisInput> = {}): SynthesisInput {
  return { text, language: 'en-US', voice: { espeakVoice: 'en-us' }, modelId: 'tts-3.0', ...extra };
}

async function synth(engine: SpeechEngine, request: SynthesisInput): Promise<Result> {
  const events: EngineEvent[] = [];
  for await (const ev of engine.synthesize(request)) events.push(ev);
  const chunks = events.flatMap((e) => (e.type === 'audio' ? [e.pcm] : []));
  const pcm = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    pcm.set(c, o);
    o += c.length;
  }
  const marks = events.flatMap((e) => (e.type === 'marks' ? [...e.marks] : []));
  return { events, pcm, marks, durationMs: (pcm.length * 1000) / 22050 };
}

async function failure(iterable: AsyncIterable<EngineEvent>): Promise<unknown> {
  try {
    for await (const _ev of iterable) {
      // consume
    }
  } catch (err) {
    return err;
  }
  throw new Error('expected the synthesis to fail');
}

function checkMarks(text: string, result: Result): void {
  const words = parseSpeechInput(text).words;
  expect(result.marks.map((m) => [m.value, m.start, m.end])).to.deep.equal(words.map((w) => [w.value, w.start, w.end]));
  let previousEnd = 0;
  for (const m of result.marks) {
    expect(m.start_time, m.value).to.be.at.least(previousEnd);
    expect(m.end_time, m.value).to.be.at.least(m.start_time);
    expect(m.end_time, m.value).to.be.at.most(Math.ceil(result.durationMs));
    previousEnd = m.end_time;
  }
}

describe('espeak engine (WebAssembly workers)', function () {
  this.timeout(60000);
  let engine: SpeechEngine;
  before(async () => {
    engine = createEspeakEngine({ workers: 2, logger: silentLogger });
    await engine.ready();
  });
  after(async () => engine.close());

  it('marks every word of a 200-word text exactly once, in order, within the audio', async () => {
    const result = await synth(engine, input(SAMPLE_TEXT));
    expect(result.durationMs).to.be.greaterThan(40000);
    checkMarks(SAMPLE_TEXT, result);
    // Words espeak speaks without an event still get a proper span.
    const the = result.marks.find((m) => m.start === SAMPLE_TEXT.indexOf('the cliff'));
    expect(the?.end_time).to.be.greaterThan(the?.start_time ?? Infinity);
    const sentences = result.events.filter((e) => e.type === 'sentence');
    expect(sentences.length).to.equal(parseSpeechInput(SAMPLE_TEXT).sentences.length);
  });

  it('streams marks as they become final, interleaved with audio', async () => {
    const result = await synth(engine, input(SAMPLE_TEXT));
    const firstMarks = result.events.findIndex((e) => e.type === 'marks');
    const lastAudio = result.events.map((e) => e.type).lastIndexOf('audio');
    expect(firstMarks).to.be.greaterThan(0);
    expect(firstMarks).to.be.lessThan(lastAudio);
    expect(result.events.filter((e) => e.type === 'marks').length).to.be.greaterThan(10);
  });

  it('gives offsets into the SSML source and honours prosody rate (50% doubles the duration)', async () => {
    const sentence = 'The quick brown fox jumps over the lazy dog near the quiet river bank.';
    const plain = await synth(engine, input(`<speak>${sentence}</speak>`));
    const slowText = `<speak><prosody rate="50%">${sentence}</prosody></speak>`;
    const slow = await synth(engine, input(slowText));
    const ratio = slow.durationMs / plain.durationMs;
    expect(ratio).to.be.within(1.7, 2.3);
    checkMarks(slowText, slow);
    expect(slow.marks[0]).to.include({ value: 'The', start: slowText.indexOf('The') });
  });

  it('keeps prosody across the pieces of a long SSML input', async () => {
    const plain = await synth(engine, input(SAMPLE_TEXT));
    const slowText = `<speak><p><prosody rate="50%">${SAMPLE_TEXT}</prosody></p></speak>`;
    const slow = await synth(engine, input(slowText));
    expect(slow.durationMs / plain.durationMs).to.be.within(1.7, 2.3);
    checkMarks(slowText, slow);
  });

  it('applies the voice profile rate and variant', async () => {
    const text = 'Speaking at a different rate changes the duration.';
    const normal = await synth(engine, input(text));
    const fast = await synth(engine, input(text, { voice: { espeakVoice: 'en-us', ratePercent: 200 } }));
    expect(fast.durationMs / normal.durationMs).to.be.within(0.4, 0.65);
    const female = await synth(engine, input(text, { voice: { espeakVoice: 'en-us+f3' } }));
    expect(Buffer.from(female.pcm.buffer).equals(Buffer.from(normal.pcm.buffer))).to.equal(false);
  });

  it('is deterministic: the same input gives the same samples and marks', async () => {
    const a = await synth(engine, input('Determinism matters for caching and tests.'));
    const b = await synth(engine, input('Determinism matters for caching and tests.'));
    expect(Buffer.from(a.pcm.buffer).equals(Buffer.from(b.pcm.buffer))).to.equal(true);
    expect(a.marks).to.deep.equal(b.marks);
  });

  const phrases: Record<string, string> = {
    'en-US': 'Good morning, how are you?',
    'en-GB': 'Good morning, how are you?',
    'de-DE': 'Guten Morgen, wie geht es dir?',
    'es-ES': 'Buenos días, ¿cómo estás?',
    'es-MX': 'Buenos días, ¿cómo estás?',
    'fr-FR': 'Bonjour, comment allez-vous ?',
    'it-IT': 'Buongiorno, come stai?',
    'pt-BR': 'Bom dia, como você está?',
  };
  for (const [language, text] of Object.entries(phrases)) {
    it(`speaks ${language} with marks for every word`, async () => {
      const result = await synth(engine, input(text, { language, voice: { espeakVoice: 'en-us+m3' } }));
      expect(result.durationMs).to.be.greaterThan(500);
      checkMarks(text, result);
    });
  }

  it('cuts the first audio chunk small for tts-3.2', async () => {
    const result = await synth(engine, input('Low latency first chunk.', { modelId: 'tts-3.2' }));
    const first = result.events.find((e) => e.type === 'audio');
    expect(first?.type === 'audio' ? first.pcm.length : 0).to.be.within(1, 441);
  });

  for (const rate of [24000, 8000, 48000]) {
    it(`resamples in the workers to ${rate} Hz with the same marks (several jobs)`, async () => {
      const native = await synth(engine, input(SAMPLE_TEXT));
      const resampled = await synth(engine, input(SAMPLE_TEXT, { sampleRate: rate }));
      const audio = resampled.events.flatMap((e) => (e.type === 'audio' ? [e.sampleRate] : []));
      expect(new Set(audio)).to.deep.equal(new Set([rate]));
      expect(resampled.marks).to.deep.equal(native.marks);
      expect(resampled.events.filter((e) => e.type === 'sentence')).to.deep.equal(
        native.events.filter((e) => e.type === 'sentence'),
      );
      // Each job is resampled on its own, so the length may differ by rounding once per job.
      const expected = (native.pcm.length * rate) / 22050;
      expect(Math.abs(resampled.pcm.length - expected)).to.be.at.most(10);
    });
  }

  it('cuts the first chunk to 20 ms at the requested rate for tts-3.2', async () => {
    const result = await synth(engine, input('Low latency first chunk.', { modelId: 'tts-3.2', sampleRate: 24000 }));
    const first = result.events.find((e) => e.type === 'audio');
    expect(first?.type === 'audio' ? first.pcm.length : 0).to.be.within(1, 480);
  });

  for (const bad of [0, -24000, 22050.5, 4000, 96000, Number.NaN]) {
    it(`refuses the output rate ${bad} with EngineError internal`, async () => {
      const err = await failure(engine.synthesize(input('Hello.', { sampleRate: bad })));
      expect(err).to.be.instanceOf(EngineError).with.property('code', 'internal');
    });
  }

  it('handles empty and punctuation-only input', async () => {
    expect((await synth(engine, input(''))).marks).to.deep.equal([]);
    expect((await synth(engine, input('...'))).marks).to.deep.equal([]);
  });

  it('throws SsmlError for invalid SSML from the iterator', async () => {
    const err = await failure(engine.synthesize(input('<speak><bogus/></speak>')));
    expect(err).to.be.instanceOf(SsmlError);
  });

  it('stops on abort with EngineError aborted and stays usable', async () => {
    const controller = new AbortController();
    let seen = 0;
    let error: unknown;
    try {
      for await (const ev of engine.synthesize(input(SAMPLE_TEXT, { signal: controller.signal }))) {
        if (ev.type === 'audio' && ++seen === 2) controller.abort();
      }
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(EngineError);
    expect((error as EngineError).code).to.equal('aborted');
    const pre = new AbortController();
    pre.abort();
    expect(((await failure(engine.synthesize(input('x', { signal: pre.signal })))) as EngineError).code).to.equal(
      'aborted',
    );
    const after = await synth(engine, input('Still working.'));
    expect(after.marks.length).to.equal(2);
  });

  it('cancels when the consumer stops iterating early', async () => {
    for await (const ev of engine.synthesize(input(SAMPLE_TEXT))) {
      if (ev.type === 'audio') break;
    }
    const again = await synth(engine, input('After an early break.'));
    expect(again.marks.length).to.equal(4);
  });

  it('refuses work beyond the queue bound with overloaded', async () => {
    const small = createEspeakEngine({ workers: 1, maxQueue: 1, logger: silentLogger });
    try {
      await small.ready();
      const long = SAMPLE_TEXT;
      const iterators = [0, 1, 2].map(() => small.synthesize(input(long))[Symbol.asyncIterator]());
      const firsts = await Promise.allSettled(iterators.map((it) => it.next()));
      const rejected = firsts.filter((r) => r.status === 'rejected');
      expect(rejected.length).to.equal(1);
      expect(((rejected[0] as PromiseRejectedResult).reason as EngineError).code).to.equal('overloaded');
      await Promise.all(iterators.map((it) => it.return?.()));
    } finally {
      await small.close();
    }
  });

  it('lets a short synthesis finish while a long one is still being synthesised (sentence segments)', async () => {
    const single = createEspeakEngine({ workers: 1, logger: silentLogger });
    try {
      await single.ready();
      const order: string[] = [];
      const long = SAMPLE_TEXT.repeat(4);
      const run = async (name: string, text: string): Promise<Result> => {
        const result = await synth(single, input(text));
        order.push(name);
        return result;
      };
      const [longResult] = await Promise.all([run('long', long), run('short', 'A short one.')]);
      expect(order).to.deep.equal(['short', 'long']);
      checkMarks(long, longResult);
    } finally {
      await single.close();
    }
  });

  it('fails an unknown espeak voice', async () => {
    const err = await failure(
      engine.synthesize(input('x', { voice: { espeakVoice: 'no-such-voice' }, language: 'xx-XX' })),
    );
    expect(err).to.be.instanceOf(EngineError);
  });
});
