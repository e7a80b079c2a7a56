// Benchmark of chorus-operator on a real kube-apiserver: kubectl apply → last sidecar ACK for 1/100/1,000 sidecars, and
// the operator's RSS and CPU time with 1,000 and 10,000 RateLimitConfigs. Run: npx tsx test/bench/operator.ts
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { stringify } from 'yaml';
import { startKubeApiServer, type KubeApiServer } from '../support/kube-apiserver.js';
import { freePort, waitForPort } from '../support/ports.js';
import { requireBinary, startProcess, type RunningProcess } from '../support/process.js';
import type { SidecarCommand, SidecarReport } from './operator-sidecars.js';

const SIDECAR_COUNTS = (process.env.BENCH_SIDECARS ?? '1,100,1000').split(',').map(Number);
const CR_COUNTS = (process.env.BENCH_CRS ?? '1000,10000')
  .split(',')
  .filter((c) => c !== '')
  .map(Number);
/** Built operator entry (e.g. dist/operator/main.js after `npm run build`); unset runs operator/main.ts through tsx. */
const OPERATOR_JS = process.env.BENCH_OPERATOR_JS ?? '';
/** Extra node flags for the operator process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it. */
const OPERATOR_NODE_ARGS = (process.env.BENCH_OPERATOR_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BASELINE_CRS = 10;
const CREATE_CONCURRENCY = 16;
/** Budget for one phase to finish before the bench reports it as missed instead of hanging. */
const PHASE_TIMEOUT_MS = Number(process.env.BENCH_PHASE_TIMEOUT_S ?? 600) * 1000;
const RLC_PATH = '/apis/chorus.dev/v1alpha1';
const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

const epochMs = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** utime+stime of one process in ms (10 ms resolution with CLK_TCK=100). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}

/** VmRSS and VmHWM (peak) of one process in MiB. */
function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rssMiB: kb('VmRSS') / 1024, peakMiB: kb('VmHWM') / 1024 };
}

function rlc(namespace: string, name: string, domain: string, rpu: number): Record<string, unknown> {
  return {
    apiVersion: 'chorus.dev/v1alpha1',
    kind: 'RateLimitConfig',
    metadata: { name, namespace },
    spec: {
      domain,
      descriptors: [
        { key: 'path', value: '/api', rateLimit: { unit: 'minute', requestsPerUnit: rpu } },
        {
          key: 'user',
          descriptors: [{ key: 'plan', value: 'pro', rateLimit: { unit: 'second', requestsPerUnit: 10 } }],
        },
      ],
    },
  };
}

class Kubectl {
  private readonly binary = requireBinary('kubectl', 'install kubectl (Debian package kubernetes-client)');
  constructor(
    private readonly kubeconfig: string,
    private readonly cacheDir: string,
  ) {}
  /** Runs kubectl; resolves with its exit time (epoch ms) and rejects with its output on a non-zero exit. */
  run(args: readonly string[], input?: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, [`--kubeconfig=${this.kubeconfig}`, `--cache-dir=${this.cacheDir}`, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      child.on('error', reject);
      child.on('exit', (code) => {
        const at = epochMs();
        if (code === 0) resolve(at);
        else reject(new Error(`kubectl ${args.join(' ')} exited ${code}: ${output}`));
      });
      child.stdin.end(input ?? '');
    });
  }
}

/** POSTs RateLimitConfigs with bounded concurrency over one keep-alive agent (what a bulk `kubectl create` does). */
async function createInBulk(api: KubeApiServer, namespace: string, from: number, to: number): Promise<number> {
  const agent = new https.Agent({ keepAlive: true, ca: api.ca, maxSockets: CREATE_CONCURRENCY });
  const url = new URL(api.url);
  const post = (body: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = https.request(
        {
          agent,
          hostname: url.hostname,
          port: url.port,
          method: 'POST',
          path: `${RLC_PATH}/namespaces/${namespace}/ratelimitconfigs`,
          headers: { Authorization: `Bearer ${api.token}`, 'Content-Type': 'application/json' },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () =>
            res.statusCode === 201 ? resolve() : reject(new Error(`create: ${res.statusCode} ${text.slice(0, 300)}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const started = epochMs();
  let next = from;
  await Promise.all(
    Array.from({ length: CREATE_CONCURRENCY }, async () => {
      while (next < to) {
        const i = next++;
        await post(JSON.stringify(rlc(namespace, `scale-${i}`, `scale-${i}`, 100 + (i % 50))));
      }
    }),
  );
  agent.destroy();
  return epochMs() - started;
}

function httpGet(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: urlPath }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** One metric sample from the operator's /metrics, 0 when absent. */
function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

interface Operator {
  readonly proc: RunningProcess;
  readonly pid: number;
  readonly adsPort: number;
  readonly httpPort: number;
  readonly readyAtMs: number;
  readonly startedAtMs: number;
}

async function startOperator(api: KubeApiServer): Promise<Operator> {
  const [adsPort, httpPort] = [await freePort(), await freePort()];
  const startedAtMs = epochMs();
  // node --import tsx directly (not npx), so the child's pid is the operator's own process.
  const proc = startProcess(
    process.execPath,
    [
      ...OPERATOR_NODE_ARGS,
      ...(OPERATOR_JS !== '' ? [path.resolve(OPERATOR_JS)] : ['--import', 'tsx', path.resolve('operator/main.ts')]),
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/root',
        KUBECONFIG: api.kubeconfigPath,
        LEADER_ELECTION: 'false',
        HOST: '127.0.0.1',
        ADS_PORT: String(adsPort),
        HTTP_PORT: String(httpPort),
        LOG_LEVEL: 'warn',
      },
    },
  );
  const pid = proc.child.pid;
  if (pid === undefined) throw new Error('operator did not start');
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`operator exited:\n${proc.output()}`);
    const ready = await httpGet(httpPort, '/readyz').catch(() => ({ status: 0 }));
    if (ready.status === 200) break;
    if (Date.now() > deadline) throw new Error(`operator not ready:\n${proc.output()}`);
    await sleep(100);
  }
  await waitForPort(adsPort);
  return { proc, pid, adsPort, httpPort, readyAtMs: epochMs(), startedAtMs };
}

class SidecarLoad {
  private readonly child: ChildProcess;
  private waiting: ((r: SidecarReport) => void) | undefined;
  constructor() {
    this.child = fork(path.resolve('test/bench/operator-sidecars.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (r: SidecarReport) => {
      const w = this.waiting;
      this.waiting = undefined;
      w?.(r);
    });
  }
  /** Sends a command and waits for the generator's next report. */
  ask(command: SidecarCommand, timeoutMs: number): Promise<SidecarReport> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`load generator silent for ${timeoutMs} ms`)), timeoutMs);
      this.waiting = (r) => {
        clearTimeout(timer);
        if (r.event === 'failed') reject(new Error(r.message));
        else resolve(r);
      };
      this.child.send(command);
    });
  }
  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.send({ cmd: 'close' } satisfies SidecarCommand);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? NaN
    : s.length % 2 === 1
      ? s[(s.length - 1) / 2]!
      : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (n: number, digits = 0): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

async function fanOut(api: KubeApiServer, kubectl: Kubectl, dir: string): Promise<string[][]> {
  const operator = await startOperator(api);
  const rows: string[][] = [];
  try {
    for (const count of SIDECAR_COUNTS) {
      const load = new SidecarLoad();
      try {
        const connectStart = epochMs();
        const connected = await load.ask(
          { cmd: 'connect', port: operator.adsPort, sidecars: count, namespace: 'bench' },
          PHASE_TIMEOUT_MS,
        );
        const connectMs = connected.event === 'connected' ? connected.lastAckMs - connectStart : NaN;
        await sleep(1500); // let the status writes that the connects caused pass
        const total: number[] = [];
        const kubectlMs: number[] = [];
        const fanMs: number[] = [];
        const opCpu: number[] = [];
        const loadCpu: number[] = [];
        // Round 0 warms kubectl's discovery cache and the code paths; it is not counted.
        for (let round = 0; round <= ROUNDS; round++) {
          const name = `probe-${count}-${round}`;
          const file = path.join(dir, `${name}.yaml`);
          writeFileSync(file, stringify(rlc('bench', name, name, 10 + round)));
          const expectAck = load.ask({ cmd: 'expect', name: `bench/${name}`, timeoutMs: 60_000 }, 70_000);
          const cpuBefore = cpuMsOf(operator.pid);
          const t0 = epochMs();
          const appliedAt = await kubectl.run(['apply', '-f', file]);
          const acked = await expectAck;
          const cpuAfter = cpuMsOf(operator.pid);
          if (acked.event !== 'acked') throw new Error('unexpected report');
          if (round > 0) {
            total.push(acked.lastAckMs - t0);
            kubectlMs.push(appliedAt - t0);
            fanMs.push(acked.lastAckMs - acked.firstResponseMs);
            opCpu.push(cpuAfter - cpuBefore);
            loadCpu.push(acked.cpuMs);
          }
          await sleep(1500); // status debounce (1 s) and its writes, so rounds do not overlap
        }
        const m = await httpGet(operator.httpPort, '/metrics');
        rows.push([
          String(count),
          fmt(connectMs),
          fmt(median(kubectlMs)),
          fmt(median(total)),
          fmt(Math.max(...total)),
          fmt(median(fanMs)),
          fmt(median(opCpu)),
          fmt(median(loadCpu)),
          fmt(metric(m.body, 'chorus_operator_xds_connected_sidecars')),
        ]);
        console.error(`fan-out ${count}: ${rows[rows.length - 1]!.join(' ')}`);
      } finally {
        await load.close();
      }
      await sleep(1500);
    }
  } finally {
    await operator.proc.stop(10_000);
  }
  return rows;
}

async function scale(api: KubeApiServer): Promise<string[][]> {
  const rows: string[][] = [];
  // Reference: the operator with only the fan-out phase's few CRs.
  let created = 0;
  for (const target of CR_COUNTS.length === 0 ? [] : [0, ...CR_COUNTS]) {
    let createMs = 0;
    const before = created;
    if (target > created) {
      createMs = await createInBulk(api, 'scale', created, target);
      created = target;
    }
    const operator = await startOperator(api);
    const load = new SidecarLoad();
    try {
      const sidecar = load.ask({ cmd: 'connect', port: operator.adsPort, sidecars: 1, namespace: 'scale' }, 60_000);
      await sidecar;
      const served = await load.ask(
        { cmd: 'expect', count: target, timeoutMs: PHASE_TIMEOUT_MS },
        PHASE_TIMEOUT_MS + 5000,
      );
      if (served.event !== 'acked') throw new Error('unexpected report');
      const servedMem = memoryOf(operator.pid);
      const servedCpu = cpuMsOf(operator.pid);
      // Then wait until the status writes are done: the write counter stops moving for 3 s.
      let writes = -1;
      let stableSince = epochMs();
      const deadline = epochMs() + PHASE_TIMEOUT_MS;
      let statusDone = false;
      let metricsText = '';
      while (epochMs() < deadline) {
        metricsText = (await httpGet(operator.httpPort, '/metrics')).body;
        const now = metric(metricsText, 'chorus_operator_status_writes_total{result="ok"}');
        if (now !== writes) {
          writes = now;
          stableSince = epochMs();
        } else if (writes >= target && epochMs() - stableSince > 3000) {
          statusDone = true;
          break;
        }
        await sleep(500);
      }
      const doneMem = memoryOf(operator.pid);
      const doneCpu = cpuMsOf(operator.pid);
      rows.push([
        String(target),
        createMs === 0 ? '' : fmt((target - before) / (createMs / 1000)),
        fmt(served.lastAckMs - operator.startedAtMs),
        fmt(servedCpu),
        fmt(servedMem.rssMiB),
        statusDone ? fmt(stableSince - operator.startedAtMs) : `>${fmt(PHASE_TIMEOUT_MS / 1000)} s`,
        fmt(writes),
        fmt(doneCpu),
        fmt(doneMem.rssMiB),
        fmt(doneMem.peakMiB),
        fmt(metric(metricsText, 'chorus_operator_reconcile_duration_seconds_count')),
        fmt(metric(metricsText, 'chorus_operator_reconcile_duration_seconds_sum') * 1000),
      ]);
      console.error(`scale ${target}: ${rows[rows.length - 1]!.join(' ')}`);
    } finally {
      await load.close();
      await operator.proc.stop(10_000);
    }
  }
  return rows;
}

async function main(): Promise<void> {
  const load0 = os.loadavg();
  const startedIso = new Date().toISOString();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-bench-op-'));
  const api = await startKubeApiServer();
  try {
    const kubectl = new Kubectl(api.kubeconfigPath, path.join(dir, 'cache'));
    await kubectl.run(['apply', '-f', path.resolve('crds/chorus.dev_ratelimitconfigs.yaml')]);
    await kubectl.run(['wait', '--for=condition=Established', 'crd/ratelimitconfigs.chorus.dev', '--timeout=60s']);
    await kubectl.run(['create', 'namespace', 'bench']);
    await kubectl.run(['create', 'namespace', 'scale']);
    const baseline = Array.from({ length: BASELINE_CRS }, (_, i) =>
      stringify(rlc('bench', `base-${i}`, `base-${i}`, 100)),
    );
    for (let attempt = 0; ; attempt++) {
      // The new resource's endpoint can lag the Established condition briefly.
      try {
        await kubectl.run(['apply', '-f', '-'], baseline.join('---\n'));
        break;
      } catch (err) {
        if (attempt >= 20) throw err;
        await sleep(500);
      }
    }
    const fanRows = await fanOut(api, kubectl, dir);
    const scaleRows = await scale(api);
    const load1 = os.loadavg();
    let commit = process.env.BENCH_COMMIT ?? '';
    if (commit === '') {
      try {
        commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { stdio: 'pipe' }).toString().trim();
      } catch {
        commit = 'unknown (not a git checkout; set BENCH_COMMIT)';
      }
    }
    console.log(
      `\nchorus-operator benchmark, ${startedIso}, commit ${commit}, operator ${OPERATOR_JS || 'operator/main.ts via tsx'}, ` +
        `Node ${process.version}, ` +
        `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}, ${fmt(os.totalmem() / 2 ** 30)} GiB, ` +
        `load average ${load0.map((l) => l.toFixed(1)).join('/')} → ${load1.map((l) => l.toFixed(1)).join('/')}\n`,
    );
    console.log(
      `kubectl apply → last ACK (${ROUNDS} rounds each; ${BASELINE_CRS + 1}+ CRs in the sidecars' namespace; times in ms)\n`,
    );
    console.log(
      table(
        [
          'sidecars',
          'connect all',
          'kubectl exits',
          'last ACK p50',
          'last ACK max',
          '1st→last resp',
          'operator CPU',
          'loadgen CPU',
          'streams',
        ],
        fanRows,
      ),
    );
    console.log(
      '\nOperator with N RateLimitConfigs in one namespace (one sidecar there; times from process start in ms)\n',
    );
    console.log(
      table(
        [
          'CRs',
          'created/s',
          'served',
          'CPU ms',
          'RSS MiB',
          'status done',
          'writes',
          'CPU ms',
          'RSS MiB',
          'peak MiB',
          'reconciles',
          'reconcile ms',
        ],
        scaleRows,
      ),
    );
  } finally {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
