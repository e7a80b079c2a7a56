#!/usr/bin/env node
// chorus-speech: reads the environment once, builds the gateway and runs it until SIGTERM/SIGINT.
import { createLogger } from '../sidecar/logging.js';
import { createEspeakEngine } from './engine/espeak-engine.js';
import { createRemoteEngine } from './engine/remote-engine.js';
import type { SpeechEngine } from './engine/engine.js';
import { startGateway } from './gateway.js';
import { loadSpeechSettings, SettingsError, type SpeechSettings } from './settings.js';
import { StoreError } from './store/index.js';
import type { Logger } from '../sidecar/logger.js';

function createEngine(settings: SpeechSettings, logger: Logger): SpeechEngine {
  if (settings.engineUrl !== null) return createRemoteEngine({ url: settings.engineUrl, logger });
  return createEspeakEngine({ workers: settings.engineWorkers, logger });
}

async function main(): Promise<void> {
  let settings: SpeechSettings;
  try {
    settings = loadSpeechSettings(process.env);
  } catch (err) {
    process.stderr.write(`chorus-speech: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const logger = createLogger({ level: settings.logLevel, format: settings.logFormat });
  if (settings.ratelimitGrpcUrl !== null) {
    logger.warn('RATELIMIT_GRPC_URL is accepted but not used yet; requests are not rate limited', {
      ratelimit_grpc_url: settings.ratelimitGrpcUrl,
    });
  }
  let gateway;
  try {
    gateway = await startGateway({ settings, logger, createEngine });
  } catch (err) {
    const known = err instanceof StoreError || err instanceof SettingsError;
    logger.fatal(
      known ? (err as Error).message : 'the gateway could not start',
      known ? {} : { error: String((err as Error).stack ?? err) },
    );
    await logger.close();
    process.exitCode = 1;
    return;
  }
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    void gateway
      .close()
      .catch((err: unknown) => logger.error('shutdown failed', { error: String(err) }))
      .finally(() => {
        void logger.close().finally(() => process.exit(0));
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

await main();
