// The composition root of the speech gateway: store, catalog, bootstrap, auth, engine, metrics, HTTP server.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Express } from 'express';
import type { Logger } from '../sidecar/logger.js';
import { createEncoderPool, resolveOutputFormat, type EncoderPool } from './audio/index.js';
import type { SpeechEngine } from './engine/engine.js';
import { createApp, createGatewayMetrics, type ApiDeps, type EncoderFactory } from './api/index.js';
import { bootstrapEmptyStore, createAuthenticator } from './auth/index.js';
import type { SpeechSettings } from './settings.js';
import {
  createApiKeyRepository,
  createVoiceRepository,
  loadOrCreateSecret,
  openDatabase,
  type Database,
} from './store/index.js';
import { createVoiceCursorCodec, sharedVoiceSeeds } from './voices/index.js';

export const GATEWAY_PROGRAM = 'chorus-speech';
const SSE_KEEPALIVE_MS = 15_000;

export interface GatewayOptions {
  readonly settings: SpeechSettings;
  readonly logger: Logger;
  /** Builds the engine once the store is open (main passes the espeak pool or a remote client). */
  readonly createEngine: (settings: SpeechSettings, logger: Logger) => SpeechEngine;
  /** Default: createAudioEncoder, with pre-started ffmpeg processes for the /stream default (mp3_24000_128). */
  readonly createEncoder?: EncoderFactory;
  /** Default 15 000 ms; tests shorten it. */
  readonly sseKeepaliveMs?: number;
  /** Default true; tests turn off process-wide default metrics. */
  readonly defaultMetrics?: boolean;
}

export interface Gateway {
  readonly app: Express;
  /** The bound port (useful with PORT=0). */
  readonly port: number;
  readonly database: Database;
  /** The owner key created on the first start of an empty store, else null (printed once in the log). */
  readonly bootstrapKey: string | null;
  /** Stops accepting, closes the engine and the store. Idempotent. */
  close(): Promise<void>;
}

/** Opens everything, logs the quick-start key on an empty store, and listens on settings.host:port. */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { settings, logger } = options;
  const database = await openDatabase(settings, GATEWAY_PROGRAM);
  let engine: SpeechEngine | undefined;
  let server: Server | undefined;
  let encoders: EncoderPool | undefined;
  try {
    const voices = createVoiceRepository(database);
    await voices.syncSharedVoices(sharedVoiceSeeds());
    const bootstrap = await bootstrapEmptyStore(database);
    if (bootstrap !== null) {
      // The only time this key exists in clear outside the caller's hands (spec A.7 quick start).
      logger.info(`created workspace "default" and an owner key with all scopes: ${bootstrap.key}`, {
        workspace_id: bootstrap.workspaceId,
        key_id: bootstrap.keyId,
      });
    }
    engine = options.createEngine(settings, logger);
    const metrics = createGatewayMetrics({ defaultMetrics: options.defaultMetrics ?? true });
    let createEncoder = options.createEncoder;
    if (createEncoder === undefined) {
      // mp3 first byte would otherwise include ffmpeg's start-up (60-100 ms); see docs/benchmarks-speech.md.
      const defaultMp3 = resolveOutputFormat({ outputFormat: 'mp3_24000_128', route: 'stream' });
      const pool = createEncoderPool({ formats: [defaultMp3], logger });
      encoders = pool;
      createEncoder = (format) => pool.create(format);
    }
    const startedEncoders = encoders;
    const deps: ApiDeps = {
      db: database,
      voices,
      authenticator: createAuthenticator(createApiKeyRepository(database)),
      engine,
      createEncoder,
      cursors: createVoiceCursorCodec(await loadOrCreateSecret(database, 'voice-list-cursor')),
      metrics,
      logger,
      sseKeepaliveMs: options.sseKeepaliveMs ?? SSE_KEEPALIVE_MS,
    };
    const app = createApp(deps);
    const listening = app.listen(settings.port, settings.host);
    server = listening;
    await new Promise<void>((resolve, reject) => {
      listening.once('listening', resolve);
      listening.once('error', reject);
    });
    const port = (listening.address() as AddressInfo).port;
    logger.info('speech gateway listening', { host: settings.host, port, store: database.kind });
    let closing: Promise<void> | undefined;
    const startedEngine = engine;
    return {
      app,
      port,
      database,
      bootstrapKey: bootstrap?.key ?? null,
      close() {
        closing ??= (async () => {
          await new Promise<void>((resolve) => {
            listening.close(() => resolve());
            listening.closeAllConnections();
          });
          await startedEncoders?.close();
          await startedEngine.close();
          await database.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    server?.close();
    await encoders?.close();
    await engine?.close().catch(() => undefined);
    await database.close().catch(() => undefined);
    throw err;
  }
}
