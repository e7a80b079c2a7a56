// Our rate limit sidecar (sidecar/main.ts) as a child process with upstream's environment contract.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRateLimitProcess, type RateLimitService } from '../support/upstream-ratelimit.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAIN = path.join(REPO_ROOT, 'sidecar/main.ts');

/** Our service plus its counters, read from the debug `/stats` endpoint. */
export interface ChorusRateLimit extends RateLimitService {
  /** Current value of every counter in `/stats` (`name: value` lines), keyed by the full stat name. */
  counters(): Promise<ReadonlyMap<string, number>>;
}

export interface ChorusRateLimitOptions {
  /** Environment in upstream's names (REDIS_URL, RUNTIME_ROOT, ...); ports and hosts are added by the launcher. */
  readonly env: Readonly<Record<string, string>>;
  readonly startTimeoutMs?: number;
  /** A compiled `sidecar/main.js` to run with plain node; default: the TypeScript source through tsx. */
  readonly compiledMain?: string;
}

/** Parses `name: value` lines; lines whose value is not a plain number are skipped. */
export function parseStatsText(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const at = line.lastIndexOf(': ');
    if (at <= 0) continue;
    const value = Number(line.slice(at + 2).trim());
    if (Number.isFinite(value)) out.set(line.slice(0, at).trim(), value);
  }
  return out;
}

export async function startChorusRateLimit(options: ChorusRateLimitOptions): Promise<ChorusRateLimit> {
  const main = options.compiledMain ?? MAIN;
  if (!existsSync(main))
    throw new Error(`${main} does not exist: the differential tests and benchmarks need our sidecar`);
  const service = await startRateLimitProcess({
    label: 'chorus',
    command: process.execPath,
    args: options.compiledMain === undefined ? ['--import', 'tsx', MAIN] : [options.compiledMain],
    cwd: REPO_ROOT,
    env: options.env,
    startTimeoutMs: options.startTimeoutMs ?? 30_000,
  });
  return {
    ...service,
    async counters() {
      const res = await fetch(`${service.debugUrl}/stats`, { signal: AbortSignal.timeout(5000) });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`chorus /stats answered ${res.status}: ${text.slice(0, 500)}`);
      return parseStatsText(text);
    },
  };
}
