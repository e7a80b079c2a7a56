// The debug listener: endpoint index, /rlconfig, /stats and CPU/heap profiles under /debug/pprof/.
import http from 'node:http';
import { Session } from 'node:inspector';
import v8 from 'node:v8';
import type { RateLimitConfig } from '../config/types.js';
import type { Logger } from '../logger.js';
import { dumpStats } from '../stats/stats-dump.js';
import type { StatsStore } from '../stats/stats-store.js';
import { listen, pathOf, queryOf, sendPlainError, stopServer } from './http-util.js';

export interface DebugServerOptions {
  /** The config now in force; undefined before the first successful load. */
  readonly currentConfig: () => RateLimitConfig | undefined;
  readonly stats: StatsStore;
  readonly logger: Logger;
}

export interface RunningDebugServer {
  readonly port: number;
  stop(graceMs: number): Promise<void>;
}

// Same paths and help texts as upstream's debug listener.
const ENDPOINTS: Readonly<Record<string, string>> = {
  '/debug/pprof/': 'root of various pprof endpoints. hit for help.',
  '/debug/pprof/profile': 'CPU profiling endpoint',
  '/debug/pprof/trace': 'trace endpoint',
  '/rlconfig': 'print out the currently loaded configuration for debugging',
  '/stats': 'print out stats',
};

const PPROF_INDEX = [
  'profiles:',
  '/debug/pprof/profile?seconds=N: a CPU profile over N seconds (default 30), Chrome DevTools .cpuprofile JSON',
  '/debug/pprof/heap: a V8 heap snapshot (.heapsnapshot JSON)',
  '',
].join('\n');

const MAX_PROFILE_SECONDS = 300;

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    session.post(method, params ?? {}, (err, result) => {
      if (err !== null) reject(err);
      else resolve(result as T);
    });
  });
}

async function cpuProfile(seconds: number): Promise<string> {
  const session = new Session();
  session.connect();
  try {
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.start');
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const result = await post<{ profile: unknown }>(session, 'Profiler.stop');
    return JSON.stringify(result.profile);
  } finally {
    session.disconnect();
  }
}

function text(res: http.ServerResponse, body: string): void {
  res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(body);
}

export async function startDebugServer(
  host: string,
  port: number,
  options: DebugServerOptions,
): Promise<RunningDebugServer> {
  const server = http.createServer((req, res) => {
    req.resume();
    const path = pathOf(req);
    if (path === '/rlconfig') {
      text(res, options.currentConfig()?.dump() ?? '');
      return;
    }
    if (path === '/stats') {
      // Upstream's page is Go's expvar dump (`cmdline`, `memstats`); ours adds every counter and gauge.
      const process = `cmdline: ${JSON.stringify(globalThis.process.argv)}\nmemstats: ${JSON.stringify(globalThis.process.memoryUsage())}\n`;
      text(res, process + dumpStats(options.stats));
      return;
    }
    if (path === '/debug/pprof/trace') {
      sendPlainError(res, 501, 'Go execution traces do not exist in Node.js: use /debug/pprof/profile?seconds=N');
      return;
    }
    if (path === '/debug/pprof/profile') {
      const raw = queryOf(req).get('seconds') ?? '30';
      const seconds = Number(raw);
      if (!/^\d+$/.test(raw) || seconds < 1 || seconds > MAX_PROFILE_SECONDS) {
        sendPlainError(res, 400, `seconds must be an integer from 1 to ${MAX_PROFILE_SECONDS}`);
        return;
      }
      cpuProfile(seconds).then(
        (profile) => {
          res.writeHead(200, {
            'Content-Type': 'application/json',
            'Content-Disposition': 'attachment; filename="profile.cpuprofile"',
          });
          res.end(profile);
        },
        (err: unknown) => {
          options.logger.error(`cpu profile failed: ${String(err)}`);
          sendPlainError(res, 500, 'Internal Server Error');
        },
      );
      return;
    }
    if (path === '/debug/pprof/heap') {
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Content-Disposition': 'attachment; filename="heap.heapsnapshot"',
      });
      v8.getHeapSnapshot().pipe(res);
      return;
    }
    if (path.startsWith('/debug/pprof/')) {
      if (path === '/debug/pprof/') text(res, PPROF_INDEX);
      else sendPlainError(res, 404, 'Unknown profile');
      return;
    }
    // Like Go's ServeMux `/` pattern, every other path shows the index.
    const lines = Object.keys(ENDPOINTS)
      .sort()
      .map((key) => `${key}: ${ENDPOINTS[key]}\n`);
    text(res, lines.join(''));
  });
  const bound = await listen(server, host, port, 'debug');
  return { port: bound, stop: (graceMs) => stopServer(server, graceMs) };
}
