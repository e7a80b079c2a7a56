// The sidecar's xDS config source (CONFIG_TYPE=GRPC_XDS_SOTW), as the runner uses it.
export { createXdsConfigSource, RATE_LIMIT_CONFIG_TYPE_URL, XdsConfigError } from './xds-config-source.js';
export type { XdsConfigLoader, XdsConfigSource, XdsConfigSourceDeps } from './xds-config-source.js';
export type { XdsClientSettings, XdsSourceSettings } from './xds-client-settings.js';
export { createBackoff } from './backoff.js';
export type { Backoff, BackoffSettings } from './backoff.js';
export { XdsTlsError } from './xds-channel.js';
