#!/usr/bin/env node
// chorus-speech-engine: reads the environment once, runs the espeak engine behind gRPC until SIGTERM/SIGINT.
import { createLogger } from '../sidecar/logging.js';
import { createEngineServer } from './engine/engine-grpc-server.js';
import { loadEngineServerSettings, type EngineServerSettings } from './engine/engine-server-settings.js';
import { createEspeakEngine } from './engine/espeak-engine.js';

const STOP_GRACE_MS = 10_000;

async function main(): Promise<void> {
  let settings: EngineServerSettings;
  try {
    settings = loadEngineServerSettings(process.env);
  } catch (err) {
    process.stderr.write(`chorus-speech-engine: ${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const logger = createLogger({ level: settings.logLevel, format: settings.logFormat });
  const engine = createEspeakEngine({ workers: settings.workers, maxQueue: settings.maxQueue, logger });
  const server = createEngineServer({ engine, modelIds: settings.modelIds, logger });
  let port: number;
  try {
    port = await server.listen(settings.host, settings.port);
  } catch (err) {
    logger.error('cannot listen', { host: settings.host, port: settings.port, error: String(err) });
    await engine.close();
    await logger.close();
    process.exitCode = 1;
    return;
  }
  logger.info('engine server listening', {
    host: settings.host,
    port,
    workers: settings.workers,
    models: settings.modelIds.join(',') || 'all',
  });
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping', { signal });
    server.setServing(false);
    await server.stop(STOP_GRACE_MS);
    await engine.close();
    await logger.close();
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  try {
    await engine.ready();
  } catch (err) {
    logger.error('engine failed to start', { error: String(err) });
    process.exitCode = 1;
    await stop('engine-failure');
    return;
  }
  if (!stopping) {
    server.setServing(true);
    logger.info('engine ready', { port });
  }
}

void main();
