// Runs ghz against one ShouldRateLimit endpoint and reduces its JSON report to the numbers the benchmark prints.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PROTO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../proto');

export interface GhzOptions {
  /** ghz binary path. */
  readonly ghz: string;
  /** `host:port` of the gRPC listener. */
  readonly address: string;
  /** RateLimitRequest in proto3 JSON. */
  readonly request: unknown;
  readonly concurrency: number;
  readonly durationSeconds: number;
  /** Requests at the start that are not measured (connection setup, JIT warm-up). */
  readonly skipFirst: number;
}

export interface GhzResult {
  readonly count: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Calls that did not end with status OK, by error text (the end-of-run cut-off is not counted). */
  readonly errors: Readonly<Record<string, number>>;
  /** Calls cut off when ghz closed its connection at the end of the duration (not server failures). */
  readonly cutAtEnd: number;
}

interface GhzReport {
  count: number;
  rps: number;
  latencyDistribution: Array<{ percentage: number; latency: number }> | null;
  statusCodeDistribution?: Record<string, number>;
  errorDistribution?: Record<string, number>;
}

function parseReport(stdout: string): GhzResult {
  const report = JSON.parse(stdout) as GhzReport;
  const percentile = (p: number): number =>
    (report.latencyDistribution?.find((d) => d.percentage === p)?.latency ?? Number.NaN) / 1e6;
  // errorDistribution lists each failed call by message (statusCodeDistribution counts the same calls again).
  const errors: Record<string, number> = {};
  let cutAtEnd = 0;
  for (const [text, n] of Object.entries(report.errorDistribution ?? {})) {
    if (text.includes('use of closed network connection')) cutAtEnd += n;
    else errors[text] = n;
  }
  return {
    count: report.count,
    requestsPerSecond: report.rps,
    p50Ms: percentile(50),
    p99Ms: percentile(99),
    errors,
    cutAtEnd,
  };
}

export function runGhz(options: GhzOptions): Promise<GhzResult> {
  const args = [
    '--insecure',
    '--import-paths',
    `${PROTO_DIR},/usr/include`,
    '--proto',
    'envoy/service/ratelimit/v3/rls.proto',
    '--call',
    'envoy.service.ratelimit.v3.RateLimitService.ShouldRateLimit',
    '--data',
    JSON.stringify(options.request),
    '--concurrency',
    String(options.concurrency),
    '--duration',
    `${options.durationSeconds}s`,
    '--skipFirst',
    String(options.skipFirst),
    // ghz shares the 2 cores with the server; one core keeps it from starving the server it measures.
    '--cpus',
    '1',
    '--format',
    'json',
    options.address,
  ];
  return new Promise((resolve, reject) => {
    execFile(
      options.ghz,
      args,
      { maxBuffer: 64 * 1024 * 1024, timeout: (options.durationSeconds + 60) * 1000 },
      (err, stdout, stderr) => {
        if (err !== null && stdout.trim() === '') {
          reject(new Error(`ghz failed: ${err.message}\n${stderr}`));
          return;
        }
        try {
          resolve(parseReport(stdout));
        } catch (parseErr) {
          reject(
            new Error(`ghz output was not JSON (${(parseErr as Error).message}): ${stdout.slice(0, 500)}\n${stderr}`),
          );
        }
      },
    );
  });
}
