// Speech gateway benchmark over real HTTP: first audio byte, real-time factor, throughput and RSS of chorus-speech.
// Run: npx tsx test/bench/speech-gateway.ts   (loopback only; stops by itself, 2.5-4.5 minutes here)
//   BENCH_RUNS          sequential requests per 100-character case (default 50)
//   BENCH_LONG_RUNS     sequential requests per 2,000-character case (default 20)
//   BENCH_LOAD_SECONDS  closed-loop duration per concurrency level and format (default 10)
//   BENCH_PHASES        comma list of stream,timestamps,load,ffmpeg (default all)
//   BENCH_GATEWAY_MAIN  dist/speech/main.js to run the built program (then the admin CLI comes from dist too)
//   BENCH_CPU_PROF=1    runs the gateway with --cpu-prof and prints its main thread's hottest functions
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createAudioEncoder } from '../../speech/audio/encoder.js';
import { resolveOutputFormat } from '../../speech/audio/formats.js';
import { SAMPLE_TEXT } from '../integration/speech/engine/sample-text.js';
import { freePort, waitForPort } from '../support/ports.js';
import { requireBinary, startProcess, type RunningProcess } from '../support/process.js';
import { treeRssMiB } from './process-rss.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const HARD_LIMIT_MS = 330_000;
const PCM_BYTES_PER_SECOND = 24_000 * 2;
const VOICE = 'henry';

interface BenchOptions {
  readonly shortRuns: number;
  readonly longRuns: number;
  readonly loadSeconds: number;
  readonly phases: ReadonlySet<string>;
  readonly gatewayMain: string | null;
  readonly cpuProfile: boolean;
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}=${raw}: expected a positive integer`);
  return value;
}

function loadOptions(): BenchOptions {
  const phases = (process.env.BENCH_PHASES ?? 'stream,timestamps,load,ffmpeg').split(',').map((p) => p.trim());
  for (const p of phases) {
    if (!['stream', 'timestamps', 'load', 'ffmpeg'].includes(p)) throw new Error(`BENCH_PHASES: unknown phase ${p}`);
  }
  const main = process.env.BENCH_GATEWAY_MAIN;
  return {
    shortRuns: positive('BENCH_RUNS', 50),
    longRuns: positive('BENCH_LONG_RUNS', 20),
    loadSeconds: positive('BENCH_LOAD_SECONDS', 10),
    phases: new Set(phases),
    gatewayMain: main === undefined || main === '' ? null : path.resolve(main),
    cpuProfile: process.env.BENCH_CPU_PROF === '1',
  };
}

function textOf(chars: number): string {
  let text = '';
  while (text.length < chars) text += `${SAMPLE_TEXT} `;
  return text.slice(0, text.lastIndexOf(' ', chars)).trim();
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? NaN;
}

/** VmRSS and VmHWM (peak) of one process in MiB; the engine workers are threads, so they are included. */
function processMemoryMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

type Route = 'stream' | 'timestamps';

interface StreamResult {
  /** HTTP status, or 0 when the connection failed before a response. */
  readonly status: number;
  /** The error code of a JSON error body, `speech.error`'s code, or `cut` when the stream ended early; null when whole. */
  readonly error: string | null;
  /** Milliseconds from writing the request to the first audio byte (SSE: first speech.chunk with audio); -1 if none. */
  readonly firstAudioMs: number;
  readonly totalMs: number;
  /** Audio bytes received (SSE: decoded Base64). */
  readonly audioBytes: number;
  /** speech.done's audio_duration_ms on the timestamps route, else null. */
  readonly reportedDurationMs: number | null;
}

interface Target {
  readonly port: number;
  readonly key: string;
  readonly agent: http.Agent;
}

/** Incremental SSE parser: hands each complete event (name, data) to `onEvent`. */
function sseParser(onEvent: (name: string, data: string) => void): (chunk: string) => void {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) onEvent(name, data.join('\n'));
      end = buffer.indexOf('\n\n');
    }
  };
}

function requestStream(target: Target, route: Route, input: string, accept: string): Promise<StreamResult> {
  const body = JSON.stringify({ input, voice_id: VOICE });
  const urlPath = route === 'stream' ? '/v1/audio/stream' : '/v1/audio/stream/with-timestamps';
  return new Promise((resolve) => {
    const start = performance.now();
    let status = 0;
    let firstAudioMs = -1;
    let audioBytes = 0;
    let reportedDurationMs: number | null = null;
    let error: string | null = null;
    let settled = false;
    const finish = (failure: string | null): void => {
      if (settled) return;
      settled = true;
      resolve({
        status,
        error: error ?? failure,
        firstAudioMs,
        totalMs: performance.now() - start,
        audioBytes,
        reportedDurationMs,
      });
    };
    const sawAudio = (bytes: number): void => {
      if (bytes > 0 && firstAudioMs < 0) firstAudioMs = performance.now() - start;
      audioBytes += bytes;
    };
    const req = http.request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: urlPath,
        method: 'POST',
        agent: target.agent,
        headers: {
          authorization: `Bearer ${target.key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          accept,
        },
      },
      (res) => {
        status = res.statusCode ?? 0;
        if (status !== 200) {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            try {
              const parsed = JSON.parse(text) as { error?: { code?: string } };
              finish(parsed.error?.code ?? `http_${status}`);
            } catch {
              finish(`http_${status}`);
            }
          });
          res.on('error', () => finish(`http_${status}`));
          return;
        }
        if (route === 'stream') {
          res.on('data', (chunk: Buffer) => sawAudio(chunk.length));
        } else {
          res.setEncoding('utf8');
          const parse = sseParser((name, data) => {
            if (name === 'speech.chunk') {
              const audio = (JSON.parse(data) as { audio?: string }).audio;
              if (typeof audio === 'string') sawAudio(Buffer.byteLength(audio, 'base64'));
            } else if (name === 'speech.done') {
              reportedDurationMs = (JSON.parse(data) as { audio_duration_ms?: number }).audio_duration_ms ?? null;
            } else if (name === 'speech.error') {
              error = (JSON.parse(data) as { error?: { code?: string } }).error?.code ?? 'speech.error';
            }
          });
          res.on('data', (chunk: string) => parse(chunk));
        }
        // A stream the server cut (failure after the status line) ends with 'aborted'/'error', not 'end'.
        res.on('end', () => finish(route === 'timestamps' && reportedDurationMs === null ? 'cut' : null));
        res.on('error', () => finish('cut'));
        res.on('aborted', () => finish('cut'));
      },
    );
    // Whether the socket came from the keep-alive pool tells a stale pooled connection from a refused new one.
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish(`connection_${err.code ?? 'error'}${req.reusedSocket ? '_on_reused_socket' : '_on_new_socket'}`),
    );
    req.end(body);
  });
}

interface Row {
  readonly measure: string;
  readonly result: string;
}

function fmtMs(ms: number): string {
  return ms >= 100 ? ms.toFixed(0) : ms.toFixed(1);
}

function describeFirst(results: readonly StreamResult[]): string {
  const ok = results.filter((r) => r.error === null && r.firstAudioMs >= 0);
  const first = ok.map((r) => r.firstAudioMs);
  const errors = results.length - ok.length;
  return (
    `p50 ${fmtMs(percentile(first, 50))} ms, p99 ${fmtMs(percentile(first, 99))} ms, ` +
    `min ${fmtMs(Math.min(...first))} ms (${ok.length} runs${errors > 0 ? `, ${errors} errors: ${errorSummary(results)}` : ''})`
  );
}

function errorSummary(results: readonly StreamResult[]): string {
  const counts = new Map<string, number>();
  for (const r of results) {
    if (r.error === null) continue;
    const key = `${r.status} ${r.error}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts.size === 0 ? 'none' : [...counts].map(([k, n]) => `${n}× ${k}`).join(', ');
}

/** Sequential requests until `runs` are done or the deadline passes. */
async function sequential(runs: number, deadline: number, one: () => Promise<StreamResult>): Promise<StreamResult[]> {
  const results: StreamResult[] = [];
  while (results.length < runs && performance.now() < deadline) results.push(await one());
  return results;
}

/** `concurrency` clients, each sending its next request as soon as the last one ended, for `seconds`. */
async function closedLoop(
  concurrency: number,
  seconds: number,
  one: () => Promise<StreamResult>,
): Promise<{ results: StreamResult[]; wallS: number }> {
  const results: StreamResult[] = [];
  const start = performance.now();
  const stopAt = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < stopAt) {
        const r = await one();
        results.push(r);
        // A refused request returns at once; pause so that an overloaded gateway is not hammered in a tight loop.
        if (r.error !== null) await new Promise((res) => setTimeout(res, 100));
      }
    }),
  );
  return { results, wallS: (performance.now() - start) / 1000 };
}

function nodeArgs(script: string, builtScript: string | null): string[] {
  return builtScript === null ? ['--import', 'tsx', path.join(REPO, script)] : [builtScript];
}

function runAdmin(options: BenchOptions, dataDir: string, args: readonly string[]): string[] {
  const built = options.gatewayMain === null ? null : path.join(path.dirname(options.gatewayMain), 'cli/admin.js');
  const run = spawnSync(process.execPath, [...nodeArgs('speech/cli/admin.ts', built), ...args], {
    cwd: REPO,
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`admin ${args.join(' ')} failed (${run.status}): ${run.stderr}`);
  return run.stdout.trim().split('\n');
}

/** Creates a workspace and an audio-scoped service-account key before the gateway starts (LOG_LEVEL=warn hides the quick-start key). */
function createKey(options: BenchOptions, dataDir: string): string {
  const workspaceId = runAdmin(options, dataDir, ['workspace', 'create', 'bench'])[0] ?? '';
  const lines = runAdmin(options, dataDir, [
    'key',
    'create',
    '--workspace',
    workspaceId,
    '--service-account',
    'bench',
    '--scopes',
    'audio',
  ]);
  const key = lines.at(-1) ?? '';
  if (!key.startsWith('chs_')) throw new Error(`admin key create printed no key: ${lines.join(' | ')}`);
  return key;
}

async function waitReady(port: number, gateway: RunningProcess): Promise<void> {
  await waitForPort(port, '127.0.0.1', 120_000).catch((err: unknown) => {
    throw new Error(`gateway did not listen: ${(err as Error).message}\n${gateway.output()}`, { cause: err });
  });
  // Readiness waits for the engine workers, which load after the port opens.
  for (let i = 0; i < 240; i += 1) {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    await res.arrayBuffer();
    if (res.status === 200) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`gateway not ready after 60 s\n${gateway.output()}`);
}

/** Self time per function of the main thread's profile, hottest first (idle excluded). */
function summariseProfile(dir: string): Row[] {
  interface ProfileNode {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }
  interface Profile {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  }
  // Worker threads write their own files; the main thread's has thread id 0 in its name.
  const file = readdirSync(dir).find((f) => /\.0\.\d+\.cpuprofile$/.test(f));
  if (file === undefined) return [{ measure: 'CPU profile', result: `no main-thread profile in ${dir}` }];
  const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<string, number>();
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined || frame.functionName === '(idle)') return;
    const where =
      frame.url === '' ? '' : ` ${frame.url.replace(/^file:\/\//, '').replace(`${REPO}/`, '')}:${frame.lineNumber + 1}`;
    const name = `${frame.functionName || '(anonymous)'}${where}`;
    const delta = profile.timeDeltas[i] ?? 0;
    selfUs.set(name, (selfUs.get(name) ?? 0) + delta);
    totalUs += delta;
  });
  const top = [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, 20);
  return [
    {
      measure: 'CPU profile (main thread, busy time)',
      result: `${(totalUs / 1e6).toFixed(1)} s in ${path.join(dir, file)}`,
    },
    ...top.map(([name, us]) => ({
      measure: `  self ${((100 * us) / totalUs).toFixed(1)}%`,
      result: name,
    })),
  ];
}

async function ffmpegAlone(runs: number): Promise<Row[]> {
  // The same encoder the gateway uses, in this process: ffmpeg start-up plus the first mp3 frame, no HTTP, no engine.
  const pcm = Int16Array.from({ length: 22050 }, (_v, i) => Math.round(8000 * Math.sin(i / 7)));
  const firsts: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const encoder = createAudioEncoder(resolveOutputFormat({ outputFormat: 'mp3_24000_128', route: 'stream' }));
    const start = performance.now();
    encoder.write(pcm.subarray(0, 2205), 22050);
    encoder.write(pcm.subarray(2205), 22050);
    const iterator = encoder.output[Symbol.asyncIterator]();
    await iterator.next();
    firsts.push(performance.now() - start);
    encoder.abort();
    await iterator.next().catch(() => undefined);
  }
  return [
    {
      measure: 'mp3 encoder alone: first byte after 1 s written (ffmpeg start-up)',
      result: `p50 ${fmtMs(percentile(firsts, 50))} ms, p99 ${fmtMs(percentile(firsts, 99))} ms, min ${fmtMs(Math.min(...firsts))} ms (${runs} runs)`,
    },
  ];
}

async function main(): Promise<void> {
  const options = loadOptions();
  requireBinary('ffmpeg', 'install the Debian package ffmpeg');
  const benchStart = performance.now();
  const loadAtStart = os.loadavg();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'chorus-bench-speech-'));
  const profileDir = path.join(dataDir, 'cpu-profile');
  const rows: Row[] = [];
  const add = (measure: string, result: string): void => {
    rows.push({ measure, result });
  };
  let gateway: RunningProcess | undefined;
  let treePeak = 0;
  let sampler: NodeJS.Timeout | undefined;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const hardStop = setTimeout(() => {
    console.error(`speech gateway benchmark: over ${HARD_LIMIT_MS / 1000} s, giving up`);
    gateway?.child.kill('SIGKILL');
    process.exit(1);
  }, HARD_LIMIT_MS);
  hardStop.unref();
  try {
    const key = createKey(options, dataDir);
    const port = await freePort();
    const profileArgs = options.cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    const started = performance.now();
    gateway = startProcess(process.execPath, [...profileArgs, ...nodeArgs('speech/main.ts', options.gatewayMain)], {
      cwd: REPO,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        DATABASE_URL: '',
        ENGINE_URL: '',
        PORT: String(port),
        HOST: '127.0.0.1',
        ENGINE_WORKERS: '2',
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'text',
      },
    });
    const pid = gateway.child.pid ?? -1;
    await waitReady(port, gateway);
    add('gateway start to /readyz 200', `${((performance.now() - started) / 1000).toFixed(1)} s`);
    add('gateway RSS, ready and idle (VmRSS)', `${processMemoryMiB(pid).rss.toFixed(0)} MiB`);
    sampler = setInterval(() => {
      treePeak = Math.max(treePeak, treeRssMiB(pid));
    }, 1000);
    const target: Target = { port, key, agent };
    const short = textOf(100);
    const long = textOf(2000);
    // Warm-up: the first syntheses on fresh workers and the first requests through each path are slower.
    for (let i = 0; i < 4; i += 1) {
      await requestStream(target, 'stream', short, 'audio/pcm');
      await requestStream(target, 'stream', short, 'audio/mpeg');
      await requestStream(target, 'timestamps', short, 'audio/pcm');
    }
    await requestStream(target, 'stream', long, 'audio/pcm');
    add('gateway RSS after warm-up (VmRSS)', `${processMemoryMiB(pid).rss.toFixed(0)} MiB`);

    const audioSecondsOf = new Map<string, number>();
    for (const [name, text] of [
      ['100 chars', short],
      ['2,000 chars', long],
      ['500 chars', textOf(500)],
    ] as const) {
      const ref = await requestStream(target, 'stream', text, 'audio/pcm');
      if (ref.error !== null) throw new Error(`reference synthesis of ${name} failed: ${ref.status} ${ref.error}`);
      audioSecondsOf.set(text, ref.audioBytes / PCM_BYTES_PER_SECOND);
    }
    const seconds = (text: string): number => audioSecondsOf.get(text) ?? NaN;

    const cases = [
      { name: '100 chars', text: short, runs: options.shortRuns },
      { name: '2,000 chars', text: long, runs: options.longRuns },
    ];
    const accepts = [
      { name: 'pcm', accept: 'audio/pcm' },
      { name: 'mp3', accept: 'audio/mpeg' },
    ];
    // Each sequential case gets a share of the time left so that the whole run stays inside its budget.
    const caseBudgetMs = 25_000;
    for (const route of ['stream', 'timestamps'] as const) {
      if (!options.phases.has(route)) continue;
      const label = route === 'stream' ? '/stream' : '/with-timestamps';
      for (const c of cases) {
        for (const a of accepts) {
          const results = await sequential(c.runs, performance.now() + caseBudgetMs, () =>
            requestStream(target, route, c.text, a.accept),
          );
          add(`${label} first audio, ${c.name}, ${a.name}`, describeFirst(results));
          const ok = results.filter((r) => r.error === null);
          const audioS = route === 'timestamps' ? null : seconds(c.text);
          const rtf = ok.map((r) => r.totalMs / 1000 / (audioS ?? (r.reportedDurationMs ?? NaN) / 1000));
          add(
            `${label} real-time factor, ${c.name} (${seconds(c.text).toFixed(1)} s audio), ${a.name}`,
            `p50 ${percentile(rtf, 50).toFixed(4)}, p99 ${percentile(rtf, 99).toFixed(4)}; ` +
              `last byte p50 ${fmtMs(
                percentile(
                  ok.map((r) => r.totalMs),
                  50,
                ),
              )} ms`,
          );
        }
      }
    }

    if (options.phases.has('load')) {
      const text = textOf(500);
      for (const concurrency of [16, 64]) {
        for (const a of accepts) {
          // Fresh connections per level: sockets left idle by the previous level's early finishers outlive the
          // server's 5 s keep-alive and, reused, fail with ECONNRESET (an artefact of the benchmark, not of the gateway).
          const levelAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });
          const { results, wallS } = await closedLoop(concurrency, options.loadSeconds, () =>
            requestStream({ ...target, agent: levelAgent }, 'stream', text, a.accept),
          );
          levelAgent.destroy();
          const ok = results.filter((r) => r.error === null);
          const first = ok.map((r) => r.firstAudioMs);
          add(
            `load: ${concurrency} concurrent /stream × 500 chars (${seconds(text).toFixed(1)} s audio), ${a.name}`,
            `${(ok.length / wallS).toFixed(1)} req/s, ${((ok.length * seconds(text)) / wallS).toFixed(0)} s audio/s, ` +
              `first audio p50 ${fmtMs(percentile(first, 50))} ms p99 ${fmtMs(percentile(first, 99))} ms, ` +
              `${ok.length} ok / ${results.length - ok.length} errors (${errorSummary(results)}) in ${wallS.toFixed(1)} s`,
          );
        }
      }
    }
    clearInterval(sampler);
    const memory = processMemoryMiB(pid);
    add('gateway RSS at the end (VmRSS)', `${memory.rss.toFixed(0)} MiB`);
    add('gateway RSS peak (VmHWM)', `${memory.peak.toFixed(0)} MiB`);
    add('gateway + ffmpeg children, peak of 1 s samples', `${treePeak.toFixed(0)} MiB`);
    agent.destroy();
    await gateway.stop(15_000);
    if (options.phases.has('ffmpeg')) rows.push(...(await ffmpegAlone(20)));
    if (options.cpuProfile) rows.push(...summariseProfile(profileDir));
  } finally {
    if (sampler !== undefined) clearInterval(sampler);
    agent.destroy();
    await gateway?.stop();
    if (!options.cpuProfile) rmSync(dataDir, { recursive: true, force: true });
  }

  const loadAtEnd = os.loadavg();
  const width = Math.max(...rows.map((r) => r.measure.length));
  console.log(
    `speech gateway benchmark ${new Date().toISOString()}: ${os.cpus().length}× ${os.cpus()[0]?.model ?? '?'}, ` +
      `node ${process.version}, gateway ${options.gatewayMain ?? 'speech/main.ts under tsx'}, ENGINE_WORKERS=2, ` +
      `load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')} at start, ` +
      `${loadAtEnd.map((l) => l.toFixed(2)).join(' ')} at end, ${((performance.now() - benchStart) / 1000).toFixed(0)} s`,
  );
  console.log(`${'measure'.padEnd(width)} | result`);
  console.log(`${'-'.repeat(width)}-|-${'-'.repeat(40)}`);
  for (const r of rows) console.log(`${r.measure.padEnd(width)} | ${r.result}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
