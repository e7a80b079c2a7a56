// Load generator for test/bench/operator.ts: N simulated sidecars (ADS streams, distinct node ids) that ACK every response.
// Runs as its own process (forked with an IPC channel) so the operator's CPU is measured apart from the clients'.
import { credentials, type ClientDuplexStream } from '@grpc/grpc-js';
import { performance } from 'node:perf_hooks';
import { RATE_LIMIT_CONFIG_TYPE_URL } from '../../operator/xds/type-urls.js';
import type { Node } from '../../proto/gen/envoy/config/core/v3/base.js';
import {
  AggregatedDiscoveryServiceClient,
  type DiscoveryRequest,
  type DiscoveryResponse,
} from '../../proto/gen/envoy/service/discovery/v3/discovery.js';
import { RateLimitConfig } from '../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';

/** Parent → generator. */
export type SidecarCommand =
  | { readonly cmd: 'connect'; readonly port: number; readonly sidecars: number; readonly namespace: string }
  /** Report once every stream has ACKed a response that holds `name` (when given) and at least `count` resources. */
  | { readonly cmd: 'expect'; readonly name?: string; readonly count?: number; readonly timeoutMs: number }
  | { readonly cmd: 'close' };

/** Generator → parent. Times are epoch milliseconds with sub-millisecond precision (timeOrigin + now). */
export type SidecarReport =
  | { readonly event: 'connected'; readonly sidecars: number; readonly lastAckMs: number }
  | {
      readonly event: 'acked';
      readonly firstResponseMs: number;
      readonly lastAckMs: number;
      readonly cpuMs: number;
    }
  | { readonly event: 'failed'; readonly message: string };

interface Sidecar {
  readonly node: Node;
  readonly stream: ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>;
  names: ReadonlySet<string>;
  ackedAtMs: number;
  respondedAtMs: number;
}

const epochMs = (): number => performance.timeOrigin + performance.now();
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const report = (r: SidecarReport): void => {
  process.send?.(r);
};

const clients: AggregatedDiscoveryServiceClient[] = [];
const sidecars: Sidecar[] = [];
let check: () => void = () => undefined;

function request(node: Node, version: string, nonce: string): DiscoveryRequest {
  return {
    versionInfo: version,
    node,
    resourceNames: [],
    typeUrl: RATE_LIMIT_CONFIG_TYPE_URL,
    responseNonce: nonce,
    errorDetail: undefined,
  };
}

function connect(port: number, count: number, namespace: string): void {
  for (let i = 0; i < count; i++) {
    // A subchannel of its own per client: one TCP connection per sidecar, as separate pods would have.
    const client = new AggregatedDiscoveryServiceClient(`127.0.0.1:${port}`, credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
    });
    clients.push(client);
    const node: Node = {
      id: `${namespace}/sidecar-${i}`,
      cluster: 'bench',
      metadata: { namespace },
      locality: undefined,
      userAgentName: 'chorus-bench',
      clientFeatures: [],
    };
    const stream = client.streamAggregatedResources();
    const sidecar: Sidecar = { node, stream, names: new Set(), ackedAtMs: 0, respondedAtMs: 0 };
    stream.on('data', (response: DiscoveryResponse) => {
      sidecar.respondedAtMs = epochMs();
      sidecar.names = new Set(response.resources.map((r) => RateLimitConfig.decode(r.value).name));
      stream.write(request(node, response.versionInfo, response.nonce));
      sidecar.ackedAtMs = epochMs();
      check();
    });
    stream.on('error', (err: Error) => {
      if (!closing) report({ event: 'failed', message: `sidecar ${node.id}: ${err.message}` });
    });
    stream.write(request(node, '', ''));
    sidecars.push(sidecar);
  }
  check = () => {
    if (sidecars.some((s) => s.ackedAtMs === 0)) return;
    check = () => undefined;
    report({ event: 'connected', sidecars: count, lastAckMs: Math.max(...sidecars.map((s) => s.ackedAtMs)) });
  };
}

function expect(name: string | undefined, count: number | undefined, timeoutMs: number): void {
  const cpuBefore = cpuMs();
  // Names are unique per change, so holding the name proves the response came after the change.
  const done = (s: Sidecar): boolean =>
    s.ackedAtMs > 0 && (name === undefined || s.names.has(name)) && s.names.size >= (count ?? 0);
  const timer = setTimeout(() => {
    check = () => undefined;
    const ready = sidecars.filter(done).length;
    report({
      event: 'failed',
      message: `only ${ready}/${sidecars.length} sidecars ACKed the change in ${timeoutMs} ms`,
    });
  }, timeoutMs);
  check = () => {
    if (!sidecars.every(done)) return;
    clearTimeout(timer);
    check = () => undefined;
    report({
      event: 'acked',
      firstResponseMs: Math.min(...sidecars.map((s) => s.respondedAtMs)),
      lastAckMs: Math.max(...sidecars.map((s) => s.ackedAtMs)),
      cpuMs: cpuMs() - cpuBefore,
    });
  };
  check();
}

let closing = false;
process.on('message', (message: SidecarCommand) => {
  if (message.cmd === 'connect') connect(message.port, message.sidecars, message.namespace);
  else if (message.cmd === 'expect') expect(message.name, message.count, message.timeoutMs);
  else {
    closing = true;
    for (const s of sidecars) s.stream.cancel();
    for (const c of clients) c.close();
    process.disconnect();
  }
});
