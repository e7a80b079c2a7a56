// A fixed pool of espeak worker threads with a bounded job queue, abort, and restart of crashed workers.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../sidecar/logger.js';
import { EngineError } from './engine.js';
import type { SynthJob, WorkerInit, WorkerReply } from './worker-protocol.js';
import type { RawEngineEvent } from './word-aligner.js';

export interface WorkerPoolOptions {
  /** Worker threads, each with its own espeak instance (25-40 MB). At least 1. */
  readonly workers: number;
  /** Jobs allowed to wait for a free worker; one more is refused with `overloaded`. */
  readonly maxQueue: number;
  readonly logger: Logger;
}

/** One piece of a job's output. */
export interface JobChunk {
  /** Audio at `sampleRate` (the job's output rate). */
  readonly pcm: Int16Array;
  readonly sampleRate: number;
  /** Native-rate samples espeak produced for this chunk; events and marks are timed on this timeline. */
  readonly sourceSamples: number;
  /** espeak's own rate (22,050 Hz). */
  readonly sourceRate: number;
  readonly events: readonly RawEngineEvent[];
}

/** Receives one job's output, in order. */
export interface JobSink {
  chunk(chunk: JobChunk): void;
}

export type JobSpec = Omit<SynthJob, 'type' | 'id'>;

interface Pending {
  readonly job: SynthJob;
  readonly sink: JobSink;
  readonly resolve: () => void;
  readonly reject: (err: EngineError) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

interface Slot {
  worker: Worker;
  readonly flag: Int32Array;
  ready: boolean;
  sampleRate: number;
  current: Pending | undefined;
  /** A job was aborted while running: the worker is busy until its `done` arrives. */
  draining: number;
}

/** The worker: built, plain .js next to this file; under tsx (tests, bench), the .ts source loaded through tsx. */
function createWorker(workerData: WorkerInit): Worker {
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./espeak-worker.js', import.meta.url), { workerData });
  // tsx's --import loader is not active in worker threads, so the worker registers it before importing.
  // The "import" target of tsx's `./esm/api` export; found through package.json because this module may be
  // compiled to CommonJS by tsx (under mocha), where import.meta.resolve does not exist.
  const tsxDir = path.dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
  const api = pathToFileURL(path.join(tsxDir, 'dist/esm/api/index.mjs')).href;
  const entry = new URL('./espeak-worker.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData });
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private readonly readyPromise: Promise<void>;

  constructor(private readonly options: WorkerPoolOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1) {
      throw new RangeError(`workers must be a positive integer, got ${options.workers}`);
    }
    const readies: Promise<void>[] = [];
    for (let i = 0; i < options.workers; i += 1) readies.push(this.startSlot(i));
    this.readyPromise = Promise.all(readies).then(() => undefined);
    // Callers may never await ready(); a load failure still surfaces through run().
    this.readyPromise.catch(() => undefined);
  }

  /** Resolves when every worker has loaded espeak; rejects `unavailable` if one could not. */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  /** Current number of jobs waiting for a worker. */
  get queued(): number {
    return this.queue.length;
  }

  private startSlot(index: number): Promise<void> {
    const abortFlag = new SharedArrayBuffer(4);
    const init: WorkerInit = { abortFlag };
    const worker = createWorker(init);
    const slot: Slot = {
      worker,
      flag: new Int32Array(abortFlag),
      ready: false,
      sampleRate: 0,
      current: undefined,
      draining: 0,
    };
    this.slots[index] = slot;
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (reply: WorkerReply) => {
        if (reply.type === 'ready') {
          slot.ready = true;
          slot.sampleRate = reply.sampleRate;
          resolve();
          this.dispatch();
        } else if (reply.type === 'fatal') {
          reject(new EngineError('unavailable', reply.message));
        } else this.onReply(slot, reply);
      });
      worker.on('error', (err) => {
        this.options.logger.error('espeak worker failed', { worker: index, error: String(err) });
        reject(new EngineError('unavailable', `espeak worker failed: ${String(err)}`, { cause: err }));
      });
      worker.on('exit', (code) => {
        const wasReady = slot.ready;
        const job = slot.current;
        slot.current = undefined;
        slot.ready = false;
        job?.reject(new EngineError(this.closed ? 'unavailable' : 'internal', `espeak worker exited (${code})`));
        if (job !== undefined) this.detach(job);
        // A worker that never loaded would fail again: restarting it would only loop.
        if (!this.closed && wasReady && this.slots[index] === slot) {
          this.options.logger.warn('restarting espeak worker', { worker: index, exitCode: code });
          this.startSlot(index).catch((err: unknown) =>
            this.options.logger.error('espeak worker restart failed', { worker: index, error: String(err) }),
          );
        }
      });
    });
  }

  private onReply(slot: Slot, reply: Exclude<WorkerReply, { type: 'ready' | 'fatal' }>): void {
    if (slot.draining === reply.id) {
      if (reply.type !== 'chunk') {
        slot.draining = 0;
        this.dispatch();
      }
      return;
    }
    const job = slot.current;
    if (job === undefined || job.job.id !== reply.id) return;
    if (reply.type === 'chunk') {
      job.sink.chunk({
        pcm: reply.pcm,
        sampleRate: job.job.sampleRate ?? slot.sampleRate,
        sourceSamples: reply.sourceSamples,
        sourceRate: slot.sampleRate,
        events: reply.events,
      });
      return;
    }
    slot.current = undefined;
    this.detach(job);
    if (reply.type === 'done') job.resolve();
    else job.reject(new EngineError('internal', reply.message));
    this.dispatch();
  }

  private detach(p: Pending): void {
    p.signal?.removeEventListener('abort', p.onAbort);
  }

  /**
   * Runs one job; resolves after its last chunk. Rejects `EngineError` (aborted, overloaded, unavailable,
   * internal). A `continuation` (a later segment of a synthesis already under way) is never refused for a full
   * queue, so that a stream that has started is not cut off; it still waits its turn at the back.
   */
  run(spec: JobSpec, sink: JobSink, signal?: AbortSignal, continuation = false): Promise<void> {
    if (this.closed) return Promise.reject(new EngineError('unavailable', 'engine is closed'));
    if (signal?.aborted === true) return Promise.reject(new EngineError('aborted', 'synthesis aborted'));
    if (!continuation && this.queue.length >= this.options.maxQueue && !this.slots.some((s) => this.isFree(s))) {
      return Promise.reject(
        new EngineError('overloaded', `synthesis queue is full (${this.options.maxQueue} waiting)`),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const job: SynthJob = { type: 'synth', id: this.nextId++, ...spec };
      const pending: Pending = {
        job,
        sink,
        resolve,
        reject,
        signal,
        onAbort: () => this.abort(pending),
      };
      signal?.addEventListener('abort', pending.onAbort, { once: true });
      this.queue.push(pending);
      this.dispatch();
    });
  }

  private isFree(slot: Slot): boolean {
    return slot.ready && slot.current === undefined && slot.draining === 0;
  }

  private abort(p: Pending): void {
    const queued = this.queue.indexOf(p);
    if (queued >= 0) this.queue.splice(queued, 1);
    const slot = this.slots.find((s) => s.current === p);
    if (slot !== undefined) {
      Atomics.store(slot.flag, 0, p.job.id);
      slot.current = undefined;
      slot.draining = p.job.id;
    }
    this.detach(p);
    p.reject(new EngineError('aborted', 'synthesis aborted'));
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (!this.isFree(slot)) continue;
      const next = this.queue.shift();
      if (next === undefined) return;
      slot.current = next;
      slot.worker.postMessage(next.job);
    }
  }

  /** Terminates every worker; queued and running jobs fail with `unavailable`. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.queue.splice(0)) {
      this.detach(p);
      p.reject(new EngineError('unavailable', 'engine closed'));
    }
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
