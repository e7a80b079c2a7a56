// A SpeechEngine that runs syntheses on an engine server over gRPC (the gateway's choice when ENGINE_URL is set).
import * as grpc from '@grpc/grpc-js';
import { SpeechEngineClient, type SynthesizeEvent } from '../../proto/gen/chorus/speech/v1/engine.js';
import { HealthCheckResponse_ServingStatus, HealthClient } from '../../proto/gen/grpc/health/v1/health.js';
import type { Logger } from '../../sidecar/logger.js';
import { EngineError, type EngineEvent, type SpeechEngine, type SynthesisInput } from './engine.js';
import { ENGINE_HEALTH_SERVICE } from './engine-grpc-server.js';
import { errorFromWire, eventFromWire, requestToWire } from './engine-wire.js';

export interface RemoteEngineOptions {
  /** `host:port`, optionally prefixed with `grpc://` or `http://` (plaintext; TLS is not supported). */
  readonly url: string;
  readonly logger: Logger;
  /** How long `ready()` waits for the server to be reachable and SERVING; default 30 s. */
  readonly readyTimeoutMs?: number;
}

const READY_POLL_MS = 250;

/** The gRPC target for an ENGINE_URL value. */
export function grpcTarget(url: string): string {
  return url.replace(/^(grpc|http):\/\//, '').replace(/\/+$/, '');
}

// A function, not an inline check: TypeScript narrows `signal.aborted` to false after the first test.
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function isServiceError(err: unknown): err is grpc.ServiceError {
  return typeof err === 'object' && err !== null && 'code' in err && 'metadata' in err;
}

export function createRemoteEngine(options: RemoteEngineOptions): SpeechEngine {
  const target = grpcTarget(options.url);
  const channelOptions = { 'grpc.max_receive_message_length': 64 * 1024 * 1024 };
  const client = new SpeechEngineClient(target, grpc.credentials.createInsecure(), channelOptions);
  const health = new HealthClient(target, grpc.credentials.createInsecure());
  let closed = false;

  async function* synthesize(input: SynthesisInput): AsyncGenerator<EngineEvent> {
    if (closed) throw new EngineError('unavailable', 'engine client is closed');
    if (input.signal?.aborted === true) throw new EngineError('aborted', 'synthesis aborted');
    const call = client.synthesize(requestToWire(input));
    const onAbort = (): void => call.cancel();
    input.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const raw of call as AsyncIterable<SynthesizeEvent>) {
        const event = eventFromWire(raw);
        if (event !== undefined) yield event;
      }
    } catch (err) {
      if (aborted(input.signal)) throw new EngineError('aborted', 'synthesis aborted');
      if (isServiceError(err)) throw errorFromWire(err);
      throw new EngineError('unavailable', `engine server ${target}: ${String(err)}`, { cause: err });
    } finally {
      input.signal?.removeEventListener('abort', onAbort);
      // Leaving early (consumer break, error) cancels the server-side synthesis; a no-op after the end.
      call.cancel();
    }
  }

  function checkOnce(deadline: number): Promise<boolean> {
    return new Promise((resolve) => {
      health.check({ service: ENGINE_HEALTH_SERVICE }, new grpc.Metadata(), { deadline }, (err, response) => {
        resolve(err === null && response.status === HealthCheckResponse_ServingStatus.SERVING);
      });
    });
  }

  async function ready(): Promise<void> {
    const timeoutMs = options.readyTimeoutMs ?? 30_000;
    const deadline = Date.now() + timeoutMs;
    while (!closed && Date.now() < deadline) {
      if (await checkOnce(deadline)) return;
      await new Promise((r) => setTimeout(r, READY_POLL_MS));
    }
    throw new EngineError('unavailable', `engine server ${target} not serving after ${timeoutMs} ms`);
  }

  return {
    synthesize,
    ready,
    async close() {
      if (closed) return;
      closed = true;
      client.close();
      health.close();
      options.logger.debug('engine client closed', { target });
    },
  };
}
