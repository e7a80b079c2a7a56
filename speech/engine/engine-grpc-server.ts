// The engine server's gRPC listener: chorus.speech.v1.SpeechEngine over a SpeechEngine, plus grpc.health.v1.
import * as grpc from '@grpc/grpc-js';
import {
  SpeechEngineService,
  type ModelsRequest,
  type ModelsResponse,
  type SynthesizeEvent,
  type SynthesizeRequest,
} from '../../proto/gen/chorus/speech/v1/engine.js';
import {
  HealthCheckResponse_ServingStatus,
  HealthService,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from '../../proto/gen/grpc/health/v1/health.js';
import type { Logger } from '../../sidecar/logger.js';
import { EngineError, type SpeechEngine } from './engine.js';
import { errorToWire, eventToWire, requestFromWire } from './engine-wire.js';

/** The health service name for the engine; `""` (the server as a whole) answers the same. */
export const ENGINE_HEALTH_SERVICE = 'chorus.speech.v1.SpeechEngine';

export interface EngineServerOptions {
  readonly engine: SpeechEngine;
  /** Model ids this server serves; an empty list serves every model. */
  readonly modelIds: readonly string[];
  readonly logger: Logger;
}

export interface EngineServer {
  /** Binds `host:port` (port 0 picks a free one) and resolves with the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** What health checks answer: SERVING once the engine is ready (main sets it), NOT_SERVING before. */
  setServing(serving: boolean): void;
  /** Stops accepting calls, lets running ones finish for up to `graceMs`, then cancels them. */
  stop(graceMs: number): Promise<void>;
}

export function createEngineServer(options: EngineServerOptions): EngineServer {
  const { engine, modelIds, logger } = options;
  const server = new grpc.Server();
  let serving = false;
  const watchers = new Set<grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>>();
  const healthOf = (service: string): HealthCheckResponse | undefined => {
    if (service !== '' && service !== ENGINE_HEALTH_SERVICE) return undefined;
    return {
      status: serving ? HealthCheckResponse_ServingStatus.SERVING : HealthCheckResponse_ServingStatus.NOT_SERVING,
    };
  };

  server.addService(SpeechEngineService, {
    synthesize(call: grpc.ServerWritableStream<SynthesizeRequest, SynthesizeEvent>) {
      void runSynthesis(call);
    },
    models(_call: grpc.ServerUnaryCall<ModelsRequest, ModelsResponse>, callback: grpc.sendUnaryData<ModelsResponse>) {
      callback(null, { modelIds: [...modelIds] });
    },
  });

  async function runSynthesis(call: grpc.ServerWritableStream<SynthesizeRequest, SynthesizeEvent>): Promise<void> {
    const controller = new AbortController();
    call.on('cancelled', () => controller.abort());
    const fail = (err: unknown): void => {
      const wire = errorToWire(err);
      call.emit('error', { code: wire.code, details: wire.details, metadata: wire.metadata });
    };
    try {
      if (modelIds.length > 0 && !modelIds.includes(call.request.modelId)) {
        call.emit('error', {
          code: grpc.status.FAILED_PRECONDITION,
          details: `model ${call.request.modelId} is not served here (MODEL_ID=${modelIds.join(',')})`,
        });
        return;
      }
      const input = requestFromWire(call.request, controller.signal);
      for await (const event of engine.synthesize(input)) {
        if (controller.signal.aborted) break;
        // Respect HTTP/2 flow control: wait for the client to read before producing more.
        if (!call.write(eventToWire(event))) {
          // A cancelled call never drains: wake up on the abort as well.
          await new Promise<void>((resolve) => {
            call.once('drain', resolve);
            controller.signal.addEventListener('abort', () => resolve(), { once: true });
          });
        }
      }
      if (!controller.signal.aborted) call.end();
    } catch (err) {
      if (controller.signal.aborted) return;
      if (!(err instanceof EngineError) || err.code === 'internal') {
        logger.error('synthesis failed', { error: String(err) });
      }
      fail(err);
    }
  }

  server.addService(HealthService, {
    check(
      call: grpc.ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
      callback: grpc.sendUnaryData<HealthCheckResponse>,
    ) {
      const answer = healthOf(call.request.service);
      if (answer === undefined) callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
      else callback(null, answer);
    },
    watch(call: grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) {
      const answer = healthOf(call.request.service) ?? {
        status: HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN,
      };
      call.write(answer);
      watchers.add(call);
      call.on('cancelled', () => watchers.delete(call));
    },
  });

  return {
    listen(host, port) {
      return new Promise<number>((resolve, reject) => {
        server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => {
          if (err !== null) reject(err);
          else resolve(bound);
        });
      });
    },
    setServing(value) {
      serving = value;
      for (const w of watchers) {
        const answer = healthOf(w.request.service);
        if (answer !== undefined) w.write(answer);
      }
    },
    async stop(graceMs) {
      serving = false;
      for (const w of watchers) w.end();
      watchers.clear();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
