// Worker-thread body: one espeak-ng WebAssembly instance that runs synthesis jobs and streams audio and events back.
import createEspeakModule, { type EspeakEvent } from '@echogarden/espeak-ng-emscripten';
import { parentPort, workerData } from 'node:worker_threads';
import { createResampler } from '../audio/resampler.js';
import { restoreSnapshot, takeSnapshot } from './memory-snapshot.js';
import type { SynthJob, WorkerInit, WorkerReply } from './worker-protocol.js';
import type { RawEngineEvent } from './word-aligner.js';
import { splitEspeakVoice } from './voices.js';

const FORWARDED = new Set(['word', 'sentence', 'phoneme', 'end', 'mark']);

function toRaw(ev: EspeakEvent): RawEngineEvent | undefined {
  if (!FORWARDED.has(ev.type)) return undefined;
  const base = { type: ev.type as RawEngineEvent['type'], textPosition: ev.text_position, audioMs: ev.audio_position };
  return typeof ev.id === 'string' ? { ...base, id: ev.id } : base;
}

async function main(): Promise<void> {
  const port = parentPort;
  if (port === null) throw new Error('espeak-worker must run in a worker thread');
  const post = (reply: WorkerReply, transfer: ArrayBuffer[] = []): void => port.postMessage(reply, transfer);
  const init = workerData as WorkerInit;
  const abortFlag = new Int32Array(init.abortFlag);
  let loaded;
  // espeak seeds its noise generator (breath in the +f/+m variants) from the clock when it initialises; a fixed
  // clock during start-up gives every worker and every process the same seed. This thread runs nothing else yet.
  const realNow = Date.now;
  Date.now = () => 0;
  try {
    const module = await createEspeakModule();
    const instance = new module.eSpeakNGWorker();
    // Makes the binding allocate its string buffer now, so that it is part of the snapshot below.
    instance.set_voice('en-us');
    loaded = { module, instance };
  } catch (err) {
    post({ type: 'fatal', message: `cannot load espeak-ng WebAssembly: ${String(err)}` });
    return;
  } finally {
    Date.now = realNow;
  }
  const { module, instance: engine } = loaded;
  // espeak keeps state across utterances (noise generator, filters), so the same text would not give the same
  // samples twice. Restoring the WebAssembly memory after each job makes every job start from the
  // same state: output is deterministic (in-process and engine server agree byte for byte) and nothing leaks.
  // Strings go in by pointer so that the binding's JS-side allocator never holds memory the restore frees.
  const snapshot = takeSnapshot(module.HEAPU8);
  const restore = (): void => restoreSnapshot(snapshot, module.HEAPU8);
  const cString = (text: string): number => {
    const bytes = Buffer.from(`${text}\0`, 'utf8');
    const ptr = module._malloc(bytes.length);
    module.HEAPU8.set(bytes, ptr);
    return ptr;
  };
  const nativeRate = engine.get_samplerate();
  post({ type: 'ready', sampleRate: nativeRate });

  port.on('message', (job: SynthJob) => {
    try {
      // set_voice ignores an unknown variant but fails (non-zero) on an unknown base name.
      if (
        engine.set_voice(cString(job.voice)) !== 0 &&
        engine.set_voice(cString(splitEspeakVoice(job.voice).base)) !== 0
      ) {
        post({ type: 'error', id: job.id, message: `unknown espeak voice "${job.voice}"` });
        return;
      }
      // The instance is reused: every parameter is set for every job.
      engine.set_rate(job.rateWpm);
      engine.set_pitch(job.pitch);
      engine.set_range(job.range);
      let aborted = false;
      // Resampling here keeps it off the gateway's event loop, where it was the largest cost (benchmarks-speech.md).
      const resampler =
        job.sampleRate === undefined || job.sampleRate === nativeRate
          ? undefined
          : createResampler(nativeRate, job.sampleRate);
      engine.synthesize(cString(job.text), (audio, events) => {
        if (Atomics.load(abortFlag, 0) === job.id) {
          aborted = true;
          return true;
        }
        const raw: RawEngineEvent[] = [];
        for (const ev of events) {
          const r = toRaw(ev);
          if (r !== undefined) raw.push(r);
        }
        if (audio.length > 0 || raw.length > 0) {
          const pcm = resampler === undefined ? audio : resampler.process(audio);
          post({ type: 'chunk', id: job.id, pcm, sourceSamples: audio.length, events: raw }, [
            pcm.buffer as ArrayBuffer,
          ]);
        }
        return false;
      });
      if (resampler !== undefined && !aborted) {
        const tail = resampler.flush();
        if (tail.length > 0) {
          post({ type: 'chunk', id: job.id, pcm: tail, sourceSamples: 0, events: [] }, [tail.buffer as ArrayBuffer]);
        }
      }
      post({ type: 'done', id: job.id, aborted });
    } catch (err) {
      post({ type: 'error', id: job.id, message: String(err) });
    } finally {
      restore();
    }
  });
}

void main();
