// The typed settings the xDS config source needs: a structural subset of the sidecar's ConfigSourceSettings.
import type { BackoffSettings } from './backoff.js';

/** CONFIG_GRPC_XDS_* and XDS_CLIENT_* as parsed once by sidecar/settings (field names match its XdsSettings). */
export interface XdsClientSettings extends BackoffSettings {
  /** CONFIG_GRPC_XDS_NODE_ID → Node.id. */
  readonly nodeId: string;
  /** CONFIG_GRPC_XDS_NODE_METADATA (`k=v,...`) → Node.metadata, every value a string. */
  readonly nodeMetadata: Readonly<Record<string, string>>;
  /** CONFIG_GRPC_XDS_SERVER_URL, `host:port`. */
  readonly serverUrl: string;
  /** CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS (`k:v,...`) sent as stream metadata. */
  readonly clientAdditionalHeaders: Readonly<Record<string, string>>;
  readonly serverUseTls: boolean;
  /** Client certificate/key files for mTLS; '' for none. Read once at start, as upstream. */
  readonly clientTlsCert: string;
  readonly clientTlsKey: string;
  /** Extra CA file trusted besides the system roots; ''. */
  readonly serverTlsCaCert: string;
  /** Expected server name when it differs from the dial host; ''. */
  readonly serverTlsSan: string;
  /** XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES; 0 = the gRPC default (4 MiB). */
  readonly maxMsgSizeInBytes: number;
}

/** What createXdsConfigSource reads; the runner passes its ConfigSourceSettings unchanged. */
export interface XdsSourceSettings {
  readonly xds: XdsClientSettings;
  /** MERGE_DOMAIN_CONFIG. */
  readonly mergeDomainConfig: boolean;
}
