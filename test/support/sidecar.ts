// The whole rate limit sidecar in-process for integration tests: a config dir, loopback-only settings, quiet deps.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../sidecar/logger.js';
import { silentLogger } from '../../sidecar/logger.js';
import { defaultRunnerDeps, type RunnerDeps } from '../../sidecar/runner.js';

/** A temp RUNTIME_ROOT holding `config/<fileName>` with the given YAML; the caller removes it. */
export function makeSidecarConfigDir(yaml: string, fileName = 'config.yaml'): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'chorus-sidecar-'));
  mkdirSync(path.join(root, 'config'));
  writeFileSync(path.join(root, 'config', fileName), yaml);
  return root;
}

/**
 * Environment for `loadSettings`: every listener on 127.0.0.1 port 0, no statsd, files read from `root/config`
 * without watching the root symlink. `extra` adds or overrides variables (backend, TLS, ...).
 */
export function sidecarTestEnv(root: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    HOST: '127.0.0.1',
    PORT: '0',
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: '0',
    DEBUG_HOST: '127.0.0.1',
    DEBUG_PORT: '0',
    USE_STATSD: 'false',
    RUNTIME_ROOT: root,
    RUNTIME_SUBDIRECTORY: '',
    RUNTIME_WATCH_ROOT: 'false',
    ...extra,
  };
}

/** The production wiring with the periodic stats log line silenced. */
export function quietRunnerDeps(logger: Logger = silentLogger, extra: Partial<RunnerDeps> = {}): RunnerDeps {
  return { ...defaultRunnerDeps(logger), statsOutput: () => undefined, ...extra };
}
