// An in-process rate limit sidecar config source on the operator's ADS stream, recording what it loaded.
import type { RateLimitConfig as RateLimitConfigProto } from '../../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';
import { loadRateLimitConfig, xdsConfigToSource } from '../../../sidecar/config/index.js';
import { silentLogger } from '../../../sidecar/logger.js';
import { createXdsConfigSource, type XdsConfigSource } from '../../../sidecar/xds/index.js';

export class Sidecar {
  names: readonly string[] | undefined;
  domains: readonly string[] = [];
  loads = 0;
  errors: string[] = [];
  private readonly source: XdsConfigSource;
  constructor(
    port: number,
    nodeId: string,
    namespace: string,
    transform?: (c: RateLimitConfigProto) => RateLimitConfigProto,
  ) {
    this.source = createXdsConfigSource(
      {
        mergeDomainConfig: false,
        xds: {
          nodeId,
          nodeMetadata: { namespace },
          serverUrl: `127.0.0.1:${port}`,
          clientAdditionalHeaders: {},
          serverUseTls: false,
          clientTlsCert: '',
          clientTlsKey: '',
          serverTlsCaCert: '',
          serverTlsSan: '',
          maxMsgSizeInBytes: 0,
          backoffInitialIntervalMs: 100,
          backoffMaxIntervalMs: 300,
          backoffRandomFactor: 0.5,
          backoffJitter: false,
        },
      },
      {
        logger: silentLogger,
        load: (configs, merge) =>
          loadRateLimitConfig(
            configs.map((c) => xdsConfigToSource(transform ? transform(c) : c)),
            { mergeDomainConfig: merge },
          ),
        onConfig: (config, names) => {
          this.names = names;
          this.domains = config.domains;
          this.loads += 1;
        },
        onError: (err) => this.errors.push(err.message),
      },
    );
    this.source.start();
  }
  stop(): void {
    this.source.stop();
  }
}
