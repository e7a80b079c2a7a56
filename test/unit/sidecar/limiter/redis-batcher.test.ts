// Implicit pipelining batcher: window, limit, per-request replies, error isolation and per-request timeout.
import { expect } from 'chai';
import { BackendError } from '../../../../sidecar/errors.js';
import {
  createCommandBatcher,
  type RedisCommand,
  type RedisReply,
  type Schedule,
} from '../../../../sidecar/limiter/redis-batcher.js';

/** Timers that fire only when the test says so. */
function manualTimers(): { schedule: Schedule; fire(ms: number): void; pending(ms: number): number } {
  let timers: { fn: () => void; ms: number }[] = [];
  return {
    schedule(fn, ms) {
      const timer = { fn, ms };
      timers.push(timer);
      return () => {
        timers = timers.filter((t) => t !== timer);
      };
    },
    fire(ms) {
      const due = timers.filter((t) => t.ms === ms);
      timers = timers.filter((t) => t.ms !== ms);
      for (const t of due) t.fn();
    },
    pending: (ms) => timers.filter((t) => t.ms === ms).length,
  };
}

const incr = (key: string, hits = 1): RedisCommand => ['incrby', key, hits];
const expire = (key: string): RedisCommand => ['expire', key, 60];
/** The rejection reason, caught at once (so Node never sees an unhandled rejection), or undefined. */
const failure = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

/** A flush that answers each INCRBY with its hits and each other command with 1, and records every batch. */
function recordingFlush() {
  const batches: (readonly RedisCommand[])[] = [];
  const flush = (commands: readonly RedisCommand[]): Promise<readonly RedisReply[]> => {
    batches.push(commands);
    return Promise.resolve(commands.map((c): RedisReply => [null, c[0] === 'incrby' ? c[2] : 1]));
  };
  return { batches, flush };
}

describe('redis command batcher', () => {
  const window = 5;
  const timeout = 1000;

  it('sends the commands of requests made within one window as one pipeline, each request getting its own replies', async () => {
    const timers = manualTimers();
    const { batches, flush } = recordingFlush();
    const batcher = createCommandBatcher({ windowMs: window, limit: 0, flush, schedule: timers.schedule });
    const a = batcher.submit([incr('a', 2), expire('a')], timeout);
    const b = batcher.submit([incr('b', 7), expire('b')], timeout);
    const c = batcher.submit([incr('c', 3)], timeout);
    expect(batches).to.have.length(0);
    expect(timers.pending(window)).to.equal(1);
    timers.fire(window);
    expect(batches).to.have.length(1);
    expect(batches[0]).to.have.length(5);
    expect(await a).to.deep.equal([
      [null, 2],
      [null, 1],
    ]);
    expect(await b).to.deep.equal([
      [null, 7],
      [null, 1],
    ]);
    expect(await c).to.deep.equal([[null, 3]]);
    expect(batcher.flushCount()).to.equal(1);
  });

  it('starts a new window for requests after a flush', async () => {
    const timers = manualTimers();
    const { batches, flush } = recordingFlush();
    const batcher = createCommandBatcher({ windowMs: window, limit: 0, flush, schedule: timers.schedule });
    const a = batcher.submit([incr('a')], timeout);
    timers.fire(window);
    const b = batcher.submit([incr('b')], timeout);
    expect(timers.pending(window)).to.equal(1);
    timers.fire(window);
    await Promise.all([a, b]);
    expect(batches.map((batch) => batch.map((c) => c[1]))).to.deep.equal([['a'], ['b']]);
  });

  it('flushes as soon as the limit of queued commands is reached, without splitting a request', async () => {
    const timers = manualTimers();
    const { batches, flush } = recordingFlush();
    const batcher = createCommandBatcher({ windowMs: window, limit: 4, flush, schedule: timers.schedule });
    const a = batcher.submit([incr('a'), expire('a')], timeout);
    const b = batcher.submit([incr('b'), expire('b')], timeout);
    expect(batches).to.have.length(1); // 4 commands queued: flushed without waiting for the window
    expect(timers.pending(window)).to.equal(0);
    const c = batcher.submit([incr('c'), expire('c')], timeout);
    const d = batcher.submit([incr('d'), expire('d'), incr('e'), expire('e')], timeout);
    // d would overflow the limit: c goes alone first, then d (4 commands) at once.
    expect(batches.map((batch) => batch.length)).to.deep.equal([4, 2, 4]);
    const big = batcher.submit([incr('f'), expire('f'), incr('g'), expire('g'), incr('h')], timeout);
    expect(batches.map((batch) => batch.length)).to.deep.equal([4, 2, 4, 5]);
    await Promise.all([a, b, c, d, big]);
    expect((await d).map((r) => r[1])).to.deep.equal([1, 1, 1, 1]);
  });

  it('fails only the requests of the batch whose pipeline failed', async () => {
    const timers = manualTimers();
    let call = 0;
    const flush = (commands: readonly RedisCommand[]): Promise<readonly RedisReply[]> =>
      ++call === 1
        ? Promise.reject(new Error('Connection is closed.'))
        : Promise.resolve(commands.map((): RedisReply => [null, 1]));
    const batcher = createCommandBatcher({ windowMs: window, limit: 0, flush, schedule: timers.schedule });
    const a = failure(batcher.submit([incr('a')], timeout));
    const b = failure(batcher.submit([incr('b')], timeout));
    timers.fire(window);
    const c = batcher.submit([incr('c')], timeout);
    timers.fire(window);
    for (const failed of [a, b]) {
      const err = await failed;
      expect(err).to.be.instanceOf(BackendError);
      expect((err as Error).message).to.equal('Connection is closed.');
    }
    expect(await c).to.deep.equal([[null, 1]]);
  });

  it('hands a command error only to the request that sent the command', async () => {
    const timers = manualTimers();
    const flush = (commands: readonly RedisCommand[]): Promise<readonly RedisReply[]> =>
      Promise.resolve(commands.map((c): RedisReply => (c[1] === 'bad' ? [new Error('WRONGTYPE'), null] : [null, 1])));
    const batcher = createCommandBatcher({ windowMs: window, limit: 0, flush, schedule: timers.schedule });
    const good = batcher.submit([incr('good')], timeout);
    const bad = batcher.submit([incr('bad')], timeout);
    timers.fire(window);
    expect(await good).to.deep.equal([[null, 1]]);
    const replies = await bad;
    expect(replies[0]![0]!.message).to.equal('WRONGTYPE');
  });

  it('times out one request without touching the others of its batch, and a late reply is ignored', async () => {
    const timers = manualTimers();
    let answer: ((replies: readonly RedisReply[]) => void) | undefined;
    const flush = (): Promise<readonly RedisReply[]> => new Promise((resolve) => (answer = resolve));
    const batcher = createCommandBatcher({ windowMs: window, limit: 0, flush, schedule: timers.schedule });
    const short = failure(batcher.submit([incr('short')], 50));
    const long = batcher.submit([incr('long')], timeout);
    timers.fire(window);
    timers.fire(50); // the pipeline has not answered yet
    const err = await short;
    expect(err).to.be.instanceOf(BackendError);
    expect((err as Error).message).to.equal('redis request timed out after 50 ms');
    answer!([
      [null, 1],
      [null, 2],
    ]);
    expect(await long).to.deep.equal([[null, 2]]);
    expect(timers.pending(timeout)).to.equal(0); // the answered request's timer was cancelled
  });

  it('fails every request of a batch whose reply count does not match', async () => {
    const timers = manualTimers();
    const flush = (): Promise<readonly RedisReply[]> => Promise.resolve([[null, 1]]);
    const batcher = createCommandBatcher({ windowMs: window, limit: 0, flush, schedule: timers.schedule });
    const a = failure(batcher.submit([incr('a')], timeout));
    const b = failure(batcher.submit([incr('b')], timeout));
    timers.fire(window);
    for (const p of [a, b]) {
      const err = await p;
      expect((err as Error).message).to.equal('redis pipeline returned 1 replies for 2 commands');
    }
  });

  it('flushNow sends what is queued at once', async () => {
    const timers = manualTimers();
    const { batches, flush } = recordingFlush();
    const batcher = createCommandBatcher({ windowMs: window, limit: 0, flush, schedule: timers.schedule });
    const a = batcher.submit([incr('a')], timeout);
    batcher.flushNow();
    expect(batches).to.have.length(1);
    expect(timers.pending(window)).to.equal(0);
    await a;
    batcher.flushNow(); // nothing queued: no empty pipeline
    expect(batches).to.have.length(1);
  });

  it('rejects a window that is not > 0 and a limit that is not an integer ≥ 0', () => {
    const { flush } = recordingFlush();
    expect(() => createCommandBatcher({ windowMs: 0, limit: 0, flush })).to.throw(BackendError, 'window');
    expect(() => createCommandBatcher({ windowMs: -1, limit: 0, flush })).to.throw(BackendError, 'window');
    expect(() => createCommandBatcher({ windowMs: 1, limit: -1, flush })).to.throw(BackendError, 'limit');
    expect(() => createCommandBatcher({ windowMs: 1, limit: 1.5, flush })).to.throw(BackendError, 'limit');
  });

  it('uses real timers by default', async () => {
    const { batches, flush } = recordingFlush();
    const batcher = createCommandBatcher({ windowMs: 1, limit: 0, flush });
    const replies = await Promise.all([batcher.submit([incr('a')], timeout), batcher.submit([incr('b')], timeout)]);
    expect(replies).to.deep.equal([[[null, 1]], [[null, 1]]]);
    expect(batches).to.have.length(1);
  });
});
