// The SotW ADS stream handler: full state on a stream's first request, NACK parking, nonce rules, per-sidecar ACK state.
import { status as GrpcStatus, type ServerDuplexStream } from '@grpc/grpc-js';
import type { Node } from '../../proto/gen/envoy/config/core/v3/base.js';
import type { DiscoveryRequest, DiscoveryResponse } from '../../proto/gen/envoy/service/discovery/v3/discovery.js';
import type { Clock } from '../../sidecar/clock.js';
import type { Logger } from '../../sidecar/logger.js';
import type { Scope, Snapshot, SnapshotCache } from './snapshot-cache.js';
import { RATE_LIMIT_CONFIG_TYPE_URL } from './type-urls.js';

/** A NACK as the server saw it. */
export interface Rejection {
  /** The snapshot version the sidecar rejected (the one we sent with the nonce it echoed). */
  readonly version: string;
  /** The sidecar's `error_detail.message`, e.g. `team-a/api: invalid rate limit unit`. */
  readonly message: string;
  /** The xDS resource named by the message prefix; undefined when the message names none we sent. */
  readonly resourceName: string | undefined;
  readonly timeMs: number;
}

/** One connected sidecar (one ADS stream); several may share a node id. */
export interface SidecarView {
  readonly streamId: number;
  readonly nodeId: string;
  readonly scope: Scope;
  /** Features from node metadata `features=a,b`; undefined means "assume current" (D6). */
  readonly features: ReadonlySet<string> | undefined;
  /** Last version this stream ACKed; undefined until its first ACK (a reconnect's first request is not an ACK). */
  readonly ackedVersion: string | undefined;
  /** Version claimed by the stream's first request: a hint only (the reconnect quirk makes it unreliable). */
  readonly claimedVersion: string;
  /** Last NACK on this stream while it has not ACKed since; undefined otherwise. */
  readonly rejection: Rejection | undefined;
}

/** What changed: a stream subscribed ('joined'), ended ('left'), or ACKed/NACKed a response ('answered'). */
export type SidecarChange = 'joined' | 'left' | 'answered';

/** Counters the server updates; main.ts backs them with prom-client. */
export interface AdsMetrics {
  streamOpened(): void;
  streamClosed(): void;
  ack(): void;
  nack(): void;
  responseSent(bytes: number): void;
}

export interface AdsServerOptions {
  readonly cache: SnapshotCache;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics?: AdsMetrics;
  /** `control_plane.identifier` on responses (the operator pod name); '' leaves it out. */
  readonly controlPlaneId?: string;
  /**
   * Called after any ACK, NACK, stream open or close (the controller recomputes status, debounced). `change` is
   * 'answered' for an ACK or NACK: the set of sidecars and their features (D6) stayed the same.
   */
  readonly onSidecarsChanged?: (change: SidecarChange) => void;
  /** Called for every NACK (the controller quarantines the named CR). */
  readonly onNack?: (sidecar: SidecarView, rejection: Rejection) => void;
}

export interface AdsServer {
  /** Handler for ADS StreamAggregatedResources. */
  handleAdsStream(call: ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>): void;
  /** Handler for RateLimitConfigDiscoveryService/StreamRlsConfigs (D7): an empty type_url means the RLC type. */
  handleRlsStream(call: ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>): void;
  /** The current snapshot for one-shot FetchRlsConfigs. */
  fetch(request: DiscoveryRequest): DiscoveryResponse;
  /** Every connected sidecar. */
  sidecars(): SidecarView[];
  /** Last NACK per node id, kept across streams (the reconnect quirk). */
  lastRejectionOf(nodeId: string): Rejection | undefined;
  /**
   * Ends every stream with UNAVAILABLE so sidecars reconnect elsewhere; used on shutdown or lost leadership.
   * The server stays usable: streams opened later (on a new gRPC server) are served as before.
   */
  closeAll(): void;
}

interface StreamState {
  readonly id: number;
  readonly call: ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>;
  node: Node | undefined;
  nodeId: string;
  scope: Scope;
  features: ReadonlySet<string> | undefined;
  /** The type this stream subscribed to; '' before the first accepted request. */
  typeUrl: string;
  nonceCounter: number;
  /** Nonce of the response in flight (awaiting ACK/NACK); '' when none is in flight. */
  inFlightNonce: string;
  inFlightVersion: string;
  /** Last nonce sent on this stream; requests echoing any other are stale. */
  lastNonce: string;
  lastSentVersion: string;
  ackedVersion: string | undefined;
  claimedVersion: string;
  rejection: Rejection | undefined;
  closed: boolean;
}

function metadataString(node: Node | undefined, key: string): string | undefined {
  const value: unknown = node?.metadata?.[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Finds which resource a NACK message names: the sidecar prefixes load errors with `<config name>: `. */
export function attributeRejection(message: string, snapshot: Snapshot | undefined): string | undefined {
  if (snapshot === undefined) return undefined;
  let best: string | undefined;
  for (const r of snapshot.resources) {
    if (message.startsWith(`${r.name}: `) && (best === undefined || r.name.length > best.length)) best = r.name;
  }
  return best;
}

export function createAdsServer(options: AdsServerOptions): AdsServer {
  const { cache, logger, clock, metrics } = options;
  const streams = new Map<number, StreamState>();
  const rejectionsByNode = new Map<string, Rejection>();
  /** Snapshots we sent, by version, to attribute NACKs after the cache moved on. */
  const sentSnapshots = new Map<string, Snapshot>();
  let nextStreamId = 1;

  const notify = (change: SidecarChange): void => options.onSidecarsChanged?.(change);

  function view(s: StreamState): SidecarView {
    return {
      streamId: s.id,
      nodeId: s.nodeId,
      scope: s.scope,
      features: s.features,
      ackedVersion: s.ackedVersion,
      claimedVersion: s.claimedVersion,
      rejection: s.rejection,
    };
  }

  function buildResponse(snapshot: Snapshot, nonce: string): DiscoveryResponse {
    return {
      versionInfo: snapshot.version,
      resources: snapshot.resources.map((r) => r.any),
      canary: false,
      typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
      nonce,
      controlPlane: options.controlPlaneId ? { identifier: options.controlPlaneId } : undefined,
    };
  }

  function send(s: StreamState): void {
    if (s.closed) return;
    const snapshot = cache.snapshotFor(s.scope);
    s.nonceCounter += 1;
    const nonce = String(s.nonceCounter);
    s.inFlightNonce = nonce;
    s.inFlightVersion = snapshot.version;
    s.lastNonce = nonce;
    s.lastSentVersion = snapshot.version;
    sentSnapshots.set(snapshot.version, snapshot);
    if (sentSnapshots.size > 64) {
      const oldest = sentSnapshots.keys().next().value;
      if (oldest !== undefined) sentSnapshots.delete(oldest);
    }
    metrics?.responseSent(snapshot.sizeBytes);
    logger.debug('xds response', { stream: s.id, node: s.nodeId, version: snapshot.version, nonce });
    s.call.write(buildResponse(snapshot, nonce));
  }

  /** Sends when nothing is in flight and the scope's version differs from what the stream last got answered. */
  function maybeSend(s: StreamState): void {
    if (s.closed || s.typeUrl === '' || s.inFlightNonce !== '') return;
    const current = cache.snapshotFor(s.scope).version;
    // Parked after a NACK (or idle after an ACK) until the snapshot changes: no resend loop (go-control-plane #962).
    if (current === s.lastSentVersion) return;
    send(s);
  }

  function handleRequest(s: StreamState, req: DiscoveryRequest, defaultTypeUrl: string): void {
    if (req.node !== undefined && s.node === undefined) {
      s.node = req.node;
      s.nodeId = req.node.id;
      s.scope = metadataString(req.node, 'namespace');
      const features = metadataString(req.node, 'features');
      s.features = features === undefined ? undefined : new Set(features.split(',').map((f) => f.trim()));
    }
    const typeUrl = req.typeUrl !== '' ? req.typeUrl : defaultTypeUrl;
    if (typeUrl === '') {
      s.closed = true;
      s.call.emit('error', { code: GrpcStatus.INVALID_ARGUMENT, details: 'type_url is required on ADS' });
      return;
    }
    if (typeUrl !== RATE_LIMIT_CONFIG_TYPE_URL) {
      logger.warn('xds request for an unknown type; not answering', { stream: s.id, node: s.nodeId, typeUrl });
      return;
    }
    if (s.typeUrl === '') {
      // First request of the stream: answer with full state whatever version/nonce it claims (reconnect quirk).
      s.typeUrl = typeUrl;
      s.claimedVersion = req.versionInfo;
      // A reconnecting sidecar claims the last version it *received*, even a rejected one: keep showing the NACK.
      const previous = rejectionsByNode.get(s.nodeId);
      if (previous !== undefined && previous.version === req.versionInfo) s.rejection = previous;
      logger.info('sidecar connected', { stream: s.id, node: s.nodeId, scope: s.scope, claimed: req.versionInfo });
      send(s);
      notify('joined');
      return;
    }
    if (req.responseNonce !== s.lastNonce) {
      logger.debug('stale xds request ignored', { stream: s.id, nonce: req.responseNonce, expected: s.lastNonce });
      return;
    }
    const answeredVersion = s.inFlightVersion;
    s.inFlightNonce = '';
    if (req.errorDetail !== undefined) {
      const snapshot = sentSnapshots.get(answeredVersion);
      const rejection: Rejection = {
        version: answeredVersion,
        message: req.errorDetail.message,
        resourceName: attributeRejection(req.errorDetail.message, snapshot),
        timeMs: clock.nowMs(),
      };
      s.rejection = rejection;
      rejectionsByNode.set(s.nodeId, rejection);
      metrics?.nack();
      logger.warn('sidecar rejected config', {
        stream: s.id,
        node: s.nodeId,
        version: answeredVersion,
        message: rejection.message,
        resource: rejection.resourceName,
      });
      options.onNack?.(view(s), rejection);
    } else {
      s.ackedVersion = req.versionInfo;
      s.rejection = undefined;
      rejectionsByNode.delete(s.nodeId);
      metrics?.ack();
      logger.debug('sidecar acked', { stream: s.id, node: s.nodeId, version: req.versionInfo });
    }
    notify('answered');
    maybeSend(s);
  }

  function serve(call: ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>, defaultTypeUrl: string): void {
    const s: StreamState = {
      id: nextStreamId++,
      call,
      node: undefined,
      nodeId: '',
      scope: undefined,
      features: undefined,
      typeUrl: '',
      nonceCounter: 0,
      inFlightNonce: '',
      inFlightVersion: '',
      lastNonce: '',
      lastSentVersion: '',
      ackedVersion: undefined,
      claimedVersion: '',
      rejection: undefined,
      closed: false,
    };
    streams.set(s.id, s);
    metrics?.streamOpened();
    const finish = (): void => {
      if (!streams.delete(s.id)) return;
      s.closed = true;
      metrics?.streamClosed();
      logger.info('sidecar disconnected', { stream: s.id, node: s.nodeId });
      notify('left');
    };
    call.on('data', (req: DiscoveryRequest) => {
      try {
        handleRequest(s, req, defaultTypeUrl);
      } catch (err) {
        logger.error('xds request failed', { stream: s.id, error: String(err) });
      }
    });
    call.on('end', () => {
      finish();
      call.end();
    });
    call.on('error', finish);
    call.on('cancelled', finish);
    call.on('close', finish);
  }

  // Lives as long as the server object: after closeAll a new gRPC server may carry it again (regained leadership).
  cache.onChange(() => {
    for (const s of streams.values()) maybeSend(s);
  });

  return {
    handleAdsStream: (call) => serve(call, ''),
    handleRlsStream: (call) => serve(call, RATE_LIMIT_CONFIG_TYPE_URL),
    fetch(request) {
      const scope = metadataString(request.node, 'namespace');
      return buildResponse(cache.snapshotFor(scope), '');
    },
    sidecars: () => [...streams.values()].filter((s) => s.typeUrl !== '').map(view),
    lastRejectionOf: (nodeId) => rejectionsByNode.get(nodeId),
    closeAll() {
      for (const s of [...streams.values()]) {
        s.closed = true;
        s.call.emit('error', { code: GrpcStatus.UNAVAILABLE, details: 'control plane shutting down' });
      }
    },
  };
}
