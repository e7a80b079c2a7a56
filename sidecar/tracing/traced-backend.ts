// A span around each counter-store round trip: `Redis Pipeline Execution` or `Memcached Fetch Execution`.
import type { ContextManager, Tracer } from '@opentelemetry/api';
import type { CounterBackend, CounterOp } from '../limiter/index.js';

export type TracedBackendKind = 'redis' | 'memcache';

export interface TracedBackendDeps {
  readonly tracer: Tracer;
  readonly contextManager: ContextManager;
  readonly kind: TracedBackendKind;
  /** REDIS_PERSECOND: SECOND-unit keys go to their own pipeline (for the attribute split). */
  readonly perSecondRedis: boolean;
}

/** Upstream's span attributes: Redis commands per pipeline (INCRBY + EXPIRE per key), memcache keys fetched. */
function attributesFor(deps: TracedBackendDeps, ops: readonly CounterOp[], increment: boolean): Record<string, number> {
  if (deps.kind === 'memcache') return { 'keysToGet length': ops.length };
  const perKey = increment ? 2 : 1;
  let perSecond = 0;
  if (deps.perSecondRedis) for (const op of ops) if (op.perSecond) perSecond++;
  return { 'pipeline length': (ops.length - perSecond) * perKey, 'perSecondPipeline length': perSecond * perKey };
}

/** Wraps increment and get; close and any other member (activeConnections, flush) pass through unchanged. */
export function traceCounterBackend<B extends CounterBackend>(inner: B, deps: TracedBackendDeps): B {
  const name = deps.kind === 'memcache' ? 'Memcached Fetch Execution' : 'Redis Pipeline Execution';
  const run = async (ops: readonly CounterOp[], increment: boolean): Promise<number[]> => {
    const span = deps.tracer.startSpan(
      name,
      { attributes: attributesFor(deps, ops, increment) },
      deps.contextManager.active(),
    );
    try {
      return await (increment ? inner.increment(ops) : inner.get(ops));
    } catch (err) {
      if (err instanceof Error) span.recordException(err);
      throw err;
    } finally {
      span.end();
    }
  };
  const traced: Pick<CounterBackend, 'increment' | 'get'> = {
    increment: (ops) => run(ops, true),
    get: (ops) => run(ops, false),
  };
  return Object.assign(Object.create(inner) as B, traced);
}
