// GET /healthz (the process answers), /readyz (store and engine usable) and /metrics; no authentication.
import type { Request, Response } from 'express';
import type { ApiDeps } from './api-deps.js';

const READY_TIMEOUT_MS = 2000;

async function check(probe: () => Promise<unknown>): Promise<'ok' | string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoute() {
  return (_req: Request, res: Response): void => {
    res.json({ status: 'ok' });
  };
}

export function readyRoute(deps: ApiDeps) {
  return async (_req: Request, res: Response): Promise<void> => {
    const [store, engine] = await Promise.all([
      check(() => deps.db.query('SELECT 1')),
      check(() => deps.engine.ready()),
    ]);
    const ready = store === 'ok' && engine === 'ok';
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: { store, engine } });
  };
}

export function metricsRoute(deps: ApiDeps) {
  return async (_req: Request, res: Response): Promise<void> => {
    res.setHeader('Content-Type', deps.metrics.registry.contentType);
    res.end(await deps.metrics.registry.metrics());
  };
}
