// The sidecar's SotW ADS client: subscribes to RateLimitConfig, loads each response as a whole, ACKs or NACKs, reconnects.
import type { ClientDuplexStream } from '@grpc/grpc-js';
import {
  AggregatedDiscoveryServiceClient,
  type DiscoveryRequest,
  type DiscoveryResponse,
} from '../../proto/gen/envoy/service/discovery/v3/discovery.js';
import { RateLimitConfig as RateLimitConfigProto } from '../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';
import type { RateLimitConfig } from '../config/types.js';
import type { Logger } from '../logger.js';
import { createBackoff } from './backoff.js';
import { xdsChannelCredentials, xdsChannelOptions, xdsStreamMetadata } from './xds-channel.js';
import type { XdsSourceSettings } from './xds-client-settings.js';

export const RATE_LIMIT_CONFIG_TYPE_URL = 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig';

/** Why a response was not applied; the source NACKs it and keeps the previous config. */
export class XdsConfigError extends Error {
  constructor(
    /** unmarshal_failed: an Any was not a RateLimitConfig (upstream emits no config event for this); load_failed: the loader rejected the set. */
    readonly code: 'unmarshal_failed' | 'load_failed',
    message: string,
    /** The response's version. */
    readonly version: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'XdsConfigError';
  }
}

/**
 * Loads the full set of wire configs into one config, the same way files are loaded.
 * @throws an error with the reason (sidecar/config's ConfigError, whose `file` is the config name) when any config is invalid.
 */
export type XdsConfigLoader = (configs: readonly RateLimitConfigProto[], mergeDomainConfig: boolean) => RateLimitConfig;

export interface XdsConfigSourceDeps {
  readonly logger: Logger;
  /** A new config was loaded from a response; `names` are the RateLimitConfig names in it (may be empty). */
  readonly onConfig: (config: RateLimitConfig, names: readonly string[]) => void;
  /** A response was rejected (typed XdsConfigError); the previous config stays in force. */
  readonly onError: (err: XdsConfigError) => void;
  readonly load: XdsConfigLoader;
  /** Tests only: randomness for backoff jitter. */
  readonly random?: () => number;
}

export interface XdsConfigSource {
  /** Dials the server and subscribes; reconnects on its own until stop(). */
  start(): void;
  /** Closes the stream and the channel; no callbacks run afterwards. */
  stop(): void;
}

/** Prefixes the config name the way upstream's messages read (`<name>: <reason>`), unless the message has it. */
function nackMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const file = (err as { file?: unknown } | null)?.file;
  if (typeof file === 'string' && file !== '' && !message.startsWith(`${file}: `)) return `${file}: ${message}`;
  return message;
}

export function createXdsConfigSource(settings: XdsSourceSettings, deps: XdsConfigSourceDeps): XdsConfigSource {
  const s = settings.xds;
  const { logger } = deps;
  const backoff = createBackoff(s, deps.random);
  const node = {
    id: s.nodeId,
    cluster: '',
    metadata: { ...s.nodeMetadata },
    locality: undefined,
    userAgentName: 'chorus-ratelimit',
    clientFeatures: [],
  };
  let client: InstanceType<typeof AggregatedDiscoveryServiceClient> | undefined;
  let stream: ClientDuplexStream<DiscoveryRequest, DiscoveryResponse> | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let stopped = true;
  let lastAckedVersion = '';

  function request(versionInfo: string, responseNonce: string, errorMessage?: string): DiscoveryRequest {
    return {
      versionInfo,
      node,
      resourceNames: [],
      typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
      responseNonce,
      errorDetail: errorMessage === undefined ? undefined : { code: 0, message: errorMessage, details: [] },
    };
  }

  function reject(
    current: ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>,
    response: DiscoveryResponse,
    error: XdsConfigError,
  ): void {
    logger.warn('xds config rejected; keeping the previous config', {
      version: response.versionInfo,
      error: error.message,
    });
    deps.onError(error);
    current.write(request(lastAckedVersion, response.nonce, error.message));
  }

  function handleResponse(
    current: ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>,
    response: DiscoveryResponse,
  ): void {
    backoff.reset();
    const configs: RateLimitConfigProto[] = [];
    for (const any of response.resources) {
      try {
        if (any.typeUrl !== RATE_LIMIT_CONFIG_TYPE_URL) throw new Error(`unexpected resource type ${any.typeUrl}`);
        configs.push(RateLimitConfigProto.decode(any.value));
      } catch (err) {
        const message = `cannot unmarshal resource: ${(err as Error).message}`;
        reject(
          current,
          response,
          new XdsConfigError('unmarshal_failed', message, response.versionInfo, { cause: err }),
        );
        return;
      }
    }
    let config: RateLimitConfig;
    try {
      config = deps.load(configs, settings.mergeDomainConfig);
    } catch (err) {
      reject(
        current,
        response,
        new XdsConfigError('load_failed', nackMessage(err), response.versionInfo, { cause: err }),
      );
      return;
    }
    const names = configs.map((c) => c.name);
    logger.info('xds config loaded', { version: response.versionInfo, configs: names.length });
    deps.onConfig(config, names);
    lastAckedVersion = response.versionInfo;
    current.write(request(response.versionInfo, response.nonce));
  }

  function scheduleReconnect(reason: string): void {
    closeChannel();
    if (stopped || reconnectTimer !== undefined) return;
    const delayMs = backoff.nextDelayMs();
    logger.warn('xds stream ended; reconnecting', { reason, delayMs });
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      connect();
    }, delayMs);
  }

  function closeChannel(): void {
    const current = stream;
    stream = undefined;
    current?.removeAllListeners();
    current?.on('error', () => undefined);
    current?.cancel();
    client?.close();
    client = undefined;
  }

  function connect(): void {
    if (stopped) return;
    try {
      client = new AggregatedDiscoveryServiceClient(s.serverUrl, xdsChannelCredentials(s), {
        ...xdsChannelOptions(s),
        'grpc.initial_reconnect_backoff_ms': 1000,
        'grpc.max_reconnect_backoff_ms': Math.max(1000, s.backoffMaxIntervalMs),
      });
    } catch (err) {
      logger.error('xds channel setup failed', { error: (err as Error).message });
      scheduleReconnect((err as Error).message);
      return;
    }
    // Like upstream's blocking dial: wait for the connection (grpc-js retries with its own capped backoff), then open.
    const dialing = client;
    dialing.waitForReady(Infinity, (err) => {
      if (stopped || client !== dialing) return;
      if (err) {
        scheduleReconnect(err.message);
        return;
      }
      openStream(dialing);
    });
  }

  function openStream(channel: InstanceType<typeof AggregatedDiscoveryServiceClient>): void {
    const current = channel.streamAggregatedResources(xdsStreamMetadata(s));
    stream = current;
    current.on('data', (response: DiscoveryResponse) => {
      if (stream === current) handleResponse(current, response);
    });
    current.on('error', (err: Error) => {
      if (stream === current) scheduleReconnect(err.message);
    });
    current.on('end', () => {
      if (stream === current) scheduleReconnect('server closed the stream');
    });
    // A new stream starts from what we last applied; the nonce of an old stream means nothing here.
    current.write(request(lastAckedVersion, ''));
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      logger.info('xds config source starting', { server: s.serverUrl, nodeId: s.nodeId });
      connect();
    },
    stop() {
      stopped = true;
      if (reconnectTimer !== undefined) clearTimeout(reconnectTimer);
      reconnectTimer = undefined;
      closeChannel();
    },
  };
}
