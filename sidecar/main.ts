#!/usr/bin/env node
// chorus-ratelimit: reads the settings once, builds the logger and runs the sidecar until a signal stops it.
import cluster from 'node:cluster';
import { createLogger, type ProcessLogger } from './logging.js';
import { defaultRunnerDeps, startRateLimitServer, StartupAbortedError, type RunningRateLimitServer } from './runner.js';
import { SettingsError } from './settings/settings-error.js';
import { loadSettings, type Settings } from './settings/settings.js';

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

async function main(): Promise<number> {
  let settings: Settings;
  try {
    settings = loadSettings(process.env);
  } catch (err) {
    if (err instanceof SettingsError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const logger: ProcessLogger = createLogger(settings.logging);
  if (settings.server.workers > 1 && cluster.isPrimary) return runPrimary(settings.server.workers, logger);
  const startup = new AbortController();
  let running: RunningRateLimitServer | undefined;
  let exiting: Promise<void> | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (running === undefined) {
      logger.info(`Ratelimit server received ${signal} during startup, exiting`);
      startup.abort();
      return;
    }
    exiting ??= running.handleSignal(signal).then(async () => {
      await logger.close();
      process.exit(0);
    });
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);

  try {
    running = await startRateLimitServer(settings, { ...defaultRunnerDeps(logger), signal: startup.signal });
    return -1;
  } catch (err) {
    if (err instanceof StartupAbortedError) {
      await logger.close();
      return 0;
    }
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof SettingsError) process.stderr.write(`${message}\n`);
    else logger.fatal(message);
    await logger.close();
    return 1;
  }
}

const WORKER_RESTART_DELAY_MS = 1000;

/**
 * WORKERS > 1 (shared backends only): this process only supervises. Every worker runs the full sidecar and the
 * workers share the listening ports through node:cluster; a signal is passed on and the primary exits when all
 * workers are gone. A worker that dies on its own is replaced after a short delay.
 */
function runPrimary(workers: number, logger: ProcessLogger): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    const fork = (): void => {
      cluster.fork();
    };
    cluster.on('exit', (worker, code, signal) => {
      if (!stopping) {
        logger.error(
          `worker ${worker.process.pid ?? '?'} exited (code ${code}, signal ${signal ?? 'none'}); restarting it`,
        );
        setTimeout(fork, WORKER_RESTART_DELAY_MS);
        return;
      }
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        void logger.close().then(() => resolve(0));
      }
    });
    for (const signal of SIGNALS) {
      process.on(signal, () => {
        if (stopping) return;
        stopping = true;
        logger.info(`Ratelimit primary received ${signal}, stopping ${workers} workers`);
        for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
        if (Object.keys(cluster.workers ?? {}).length === 0) void logger.close().then(() => resolve(0));
      });
    }
    for (let i = 0; i < workers; i++) fork();
    logger.warn(`started ${workers} worker processes`);
  });
}

main().then(
  (code) => {
    // -1: the servers are running; the process lives until a signal handler exits it.
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
