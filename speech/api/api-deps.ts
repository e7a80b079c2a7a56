// What the REST layer needs from the composition root; built once in gateway.ts, fakes only in unit tests.
import type { Logger } from '../../sidecar/logger.js';
import type { Authenticator } from '../auth/index.js';
import type { SpeechEngine } from '../engine/engine.js';
import type { Database, VoiceRepository } from '../store/index.js';
import type { VoiceCursorCodec } from '../voices/index.js';
import type { GatewayMetrics } from './gateway-metrics.js';
import type { EncoderFactory } from './synthesis-session.js';

export interface ApiDeps {
  readonly db: Database;
  readonly voices: VoiceRepository;
  readonly authenticator: Authenticator;
  readonly engine: SpeechEngine;
  readonly createEncoder: EncoderFactory;
  readonly cursors: VoiceCursorCodec;
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  /** Idle time before a `: keepalive` comment on the SSE route (15 000 ms in production). */
  readonly sseKeepaliveMs: number;
}
