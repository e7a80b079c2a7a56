// Speech engine benchmark: time to first PCM, real-time factor, throughput under concurrency, RSS per worker.
// Run: npx tsx test/bench/speech-engine.ts   (BENCH_WORKERS, default the number of cores; BENCH_RUNS, default 40)
// Under tsx every worker also loads tsx and esbuild; for memory figures of the built program, run
// `npm run build` and set BENCH_ENGINE_MODULE=dist/speech/engine/espeak-engine.js.
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { silentLogger } from '../../sidecar/logger.js';
import { createAudioEncoder } from '../../speech/audio/encoder.js';
import { resolveOutputFormat } from '../../speech/audio/formats.js';
import { createResampler } from '../../speech/audio/resampler.js';
import type { SpeechEngine, SynthesisInput } from '../../speech/engine/engine.js';
import * as sourceEngine from '../../speech/engine/espeak-engine.js';
import { SAMPLE_TEXT } from '../integration/speech/engine/sample-text.js';

const workers = Number(process.env.BENCH_WORKERS ?? os.availableParallelism());
const runs = Number(process.env.BENCH_RUNS ?? 40);

function textOf(chars: number): string {
  let text = '';
  while (text.length < chars) text += `${SAMPLE_TEXT} `;
  // Cut at a word boundary so that the engine sees whole words.
  return text.slice(0, text.lastIndexOf(' ', chars)).trim();
}

function input(text: string, modelId = 'tts-3.0'): SynthesisInput {
  return { text, language: 'en-US', voice: { espeakVoice: 'en-us' }, modelId };
}

interface Run {
  readonly firstPcmMs: number;
  readonly totalMs: number;
  readonly audioMs: number;
}

async function timeOne(engine: SpeechEngine, request: SynthesisInput): Promise<Run> {
  const start = performance.now();
  let first = -1;
  let samples = 0;
  let rate = 22050;
  for await (const ev of engine.synthesize(request)) {
    if (ev.type !== 'audio') continue;
    if (first < 0) first = performance.now() - start;
    samples += ev.pcm.length;
    rate = ev.sampleRate;
  }
  return { firstPcmMs: first, totalMs: performance.now() - start, audioMs: (samples * 1000) / rate };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? NaN;
}

function rssMb(): number {
  return process.memoryUsage().rss / (1024 * 1024);
}

async function loadEngineModule(): Promise<typeof sourceEngine> {
  const built = process.env.BENCH_ENGINE_MODULE;
  if (built === undefined || built === '') return sourceEngine;
  return (await import(pathToFileURL(path.resolve(built)).href)) as typeof sourceEngine;
}

async function main(): Promise<void> {
  const { createEspeakEngine } = await loadEngineModule();
  const rows: [string, string][] = [];
  const add = (name: string, value: string): void => {
    rows.push([name, value]);
  };
  const rssBefore = rssMb();
  const engine = createEspeakEngine({ workers, maxQueue: 1024, logger: silentLogger });
  const loadStart = performance.now();
  await engine.ready();
  add(`workers ready (${workers})`, `${(performance.now() - loadStart).toFixed(0)} ms`);
  add('RSS per worker (loaded, idle)', `${((rssMb() - rssBefore) / workers).toFixed(1)} MB`);
  // Warm every worker once (the first synthesis on a fresh instance is several times slower).
  await Promise.all(Array.from({ length: workers * 2 }, () => timeOne(engine, input(textOf(300)))));
  add(
    'RSS per worker (after warm-up, incl. main-thread buffers)',
    `${((rssMb() - rssBefore) / workers).toFixed(1)} MB`,
  );

  for (const chars of [100, 2000]) {
    for (const model of ['tts-3.0', 'tts-3.2']) {
      const text = textOf(chars);
      const results: Run[] = [];
      for (let i = 0; i < runs; i += 1) results.push(await timeOne(engine, input(text, model)));
      const first = results.map((r) => r.firstPcmMs);
      add(
        `first PCM, ${chars} chars, ${model}`,
        `p50 ${percentile(first, 50).toFixed(1)} ms, p99 ${percentile(first, 99).toFixed(1)} ms (${runs} runs)`,
      );
      if (model === 'tts-3.0') {
        const rtf = results.map((r) => r.totalMs / r.audioMs);
        add(
          `real-time factor, ${chars} chars`,
          `p50 ${percentile(rtf, 50).toFixed(4)} (audio ${(
            percentile(
              results.map((r) => r.audioMs),
              50,
            ) / 1000
          ).toFixed(1)} s)`,
        );
      }
    }
  }

  for (const concurrency of [16, 64]) {
    const text = textOf(500);
    const start = performance.now();
    const results = await Promise.all(Array.from({ length: concurrency }, () => timeOne(engine, input(text))));
    const wallS = (performance.now() - start) / 1000;
    const audioS = results.reduce((n, r) => n + r.audioMs, 0) / 1000;
    const first = results.map((r) => r.firstPcmMs);
    add(
      `throughput, ${concurrency} concurrent x 500 chars`,
      `${(concurrency / wallS).toFixed(1)} syntheses/s, ${(audioS / wallS).toFixed(0)} s audio/s, first PCM p50 ${percentile(first, 50).toFixed(0)} ms p99 ${percentile(first, 99).toFixed(0)} ms`,
    );
  }
  add('RSS total (after load)', `${rssMb().toFixed(0)} MB`);
  await engine.close();

  // The audio layer runs on the gateway's main thread: resampling cost per minute of audio, ffmpeg first byte.
  const minute = Int16Array.from({ length: 22050 * 60 }, (_v, i) => Math.round(8000 * Math.sin(i / 7)));
  for (const rate of [8000, 24000, 48000]) {
    const resampler = createResampler(22050, rate);
    const start = performance.now();
    for (let i = 0; i < minute.length; i += 2206) resampler.process(minute.subarray(i, i + 2206));
    resampler.flush();
    const ms = performance.now() - start;
    add(`resample 60 s of audio 22050 -> ${rate} Hz`, `${ms.toFixed(0)} ms (RTF ${(ms / 60000).toFixed(4)})`);
  }
  for (const id of ['mp3_24000_128', 'ogg_24000', 'aac_24000']) {
    const firsts: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const encoder = createAudioEncoder(resolveOutputFormat({ outputFormat: id, route: 'stream' }));
      const start = performance.now();
      encoder.write(minute.subarray(0, 22050), 22050);
      const iterator = encoder.output[Symbol.asyncIterator]();
      await iterator.next();
      firsts.push(performance.now() - start);
      encoder.abort();
      await iterator.next().catch(() => undefined);
    }
    add(`${id} first encoded byte (ffmpeg, 1 s written)`, `p50 ${percentile(firsts, 50).toFixed(0)} ms (10 runs)`);
  }

  const width = Math.max(...rows.map(([n]) => n.length));
  console.log(
    `speech engine benchmark: ${workers} workers, ${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)}, ` +
      `engine: ${process.env.BENCH_ENGINE_MODULE ?? 'TypeScript sources under tsx'}`,
  );
  console.log(`${'measure'.padEnd(width)} | result`);
  console.log(`${'-'.repeat(width)}-|-${'-'.repeat(40)}`);
  for (const [name, value] of rows) console.log(`${name.padEnd(width)} | ${value}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
