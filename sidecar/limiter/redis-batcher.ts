// Implicit pipelining (REDIS_PIPELINE_WINDOW / _LIMIT): commands of concurrent requests flushed as one pipeline.
import { BackendError } from '../errors.js';

/** One Redis command as sent by the counter store: the name, then its arguments. */
export type RedisCommand =
  readonly ['incrby', string, number] | readonly ['expire', string, number] | readonly ['get', string];

/** One command's outcome as ioredis' pipeline.exec() reports it: [error, null] or [null, reply]. */
export type RedisReply = readonly [Error | null, unknown];

/** Sends one pipeline and resolves with one reply per command, in order; rejects when the whole pipeline failed. */
export type PipelineFlush = (commands: readonly RedisCommand[]) => Promise<readonly RedisReply[]>;

/** Starts a timer and returns the function that cancels it (setTimeout by default; tests pass a manual one). */
export type Schedule = (fn: () => void, ms: number) => () => void;

export interface CommandBatcherOptions {
  /** REDIS_PIPELINE_WINDOW in ms (> 0): how long the first queued command waits for others. */
  readonly windowMs: number;
  /** REDIS_PIPELINE_LIMIT: flush as soon as this many commands are queued; 0 = only the window limits. */
  readonly limit: number;
  /** Sends one batch. Called with the commands of every request queued since the previous flush. */
  readonly flush: PipelineFlush;
  readonly schedule?: Schedule;
}

export interface CommandBatcher {
  /**
   * Queues one request's commands (they are never split across pipelines) and resolves with exactly that
   * request's replies, in order. Rejects with BackendError when the batch's pipeline failed as a whole, or when
   * timeoutMs passed first (the other requests of the batch are not affected by this request's timeout).
   */
  submit(commands: readonly RedisCommand[], timeoutMs: number): Promise<RedisReply[]>;
  /** Pipelines sent so far (one per flush). */
  flushCount(): number;
  /** Flushes what is queued now (used on close, so no request waits for a window that no longer matters). */
  flushNow(): void;
}

interface Pending {
  readonly commands: readonly RedisCommand[];
  readonly resolve: (replies: RedisReply[]) => void;
  readonly reject: (err: Error) => void;
}

const defaultSchedule: Schedule = (fn, ms) => {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
};

/**
 * Checks REDIS_PIPELINE_WINDOW (ms ≥ 0; 0 = no batching) and REDIS_PIPELINE_LIMIT (integer ≥ 0).
 * @throws BackendError naming the bad value.
 */
export function checkPipelineSettings(windowMs: number, limit: number): void {
  if (!(windowMs >= 0)) throw new BackendError(`redis pipeline window must be ≥ 0 ms, got ${windowMs}`);
  if (!Number.isInteger(limit) || limit < 0) {
    throw new BackendError(`redis pipeline limit must be an integer ≥ 0, got ${limit}`);
  }
}

export function createCommandBatcher(options: CommandBatcherOptions): CommandBatcher {
  if (!(options.windowMs > 0)) throw new BackendError(`redis pipeline window must be > 0 ms, got ${options.windowMs}`);
  checkPipelineSettings(options.windowMs, options.limit);
  const schedule = options.schedule ?? defaultSchedule;
  let queue: Pending[] = [];
  let queuedCommands = 0;
  let cancelTimer: (() => void) | undefined;
  let flushes = 0;

  const flush = (): void => {
    cancelTimer?.();
    cancelTimer = undefined;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    queuedCommands = 0;
    const commands: RedisCommand[] = [];
    for (const pending of batch) for (const command of pending.commands) commands.push(command);
    flushes++;
    let sent: Promise<readonly RedisReply[]>;
    try {
      sent = options.flush(commands);
    } catch (err) {
      sent = Promise.reject(err as Error);
    }
    sent.then(
      (replies) => {
        if (replies.length !== commands.length) {
          const err = new BackendError(
            `redis pipeline returned ${replies.length} replies for ${commands.length} commands`,
          );
          for (const pending of batch) pending.reject(err);
          return;
        }
        let offset = 0;
        for (const pending of batch) {
          pending.resolve(replies.slice(offset, offset + pending.commands.length));
          offset += pending.commands.length;
        }
      },
      (err: unknown) => {
        const error = err instanceof BackendError ? err : new BackendError((err as Error).message, { cause: err });
        for (const pending of batch) pending.reject(error);
      },
    );
  };

  return {
    submit(commands, timeoutMs) {
      return new Promise<RedisReply[]>((resolve, reject) => {
        let settled = false;
        const cancelTimeout = schedule(() => {
          if (settled) return;
          settled = true;
          reject(new BackendError(`redis request timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        const pending: Pending = {
          commands,
          resolve: (replies) => {
            if (settled) return;
            settled = true;
            cancelTimeout();
            resolve(replies);
          },
          reject: (err) => {
            if (settled) return;
            settled = true;
            cancelTimeout();
            reject(err);
          },
        };
        // A request is never split: when it would overflow the limit, what is queued goes first.
        if (options.limit > 0 && queuedCommands > 0 && queuedCommands + commands.length > options.limit) flush();
        queue.push(pending);
        queuedCommands += commands.length;
        if (options.limit > 0 && queuedCommands >= options.limit) flush();
        else cancelTimer ??= schedule(flush, options.windowMs);
      });
    },
    flushCount: () => flushes,
    flushNow: flush,
  };
}
