// The operator's xDS side: snapshot cache, ADS stream handling and the gRPC server that carries them.
export { RATE_LIMIT_CONFIG_TYPE_URL } from './type-urls.js';
export { createSnapshotCache, hashVersion } from './snapshot-cache.js';
export type { Scope, Snapshot, SnapshotCache, SnapshotCacheOptions, XdsResource } from './snapshot-cache.js';
export { attributeRejection, createAdsServer } from './ads-server.js';
export type { AdsMetrics, AdsServer, AdsServerOptions, Rejection, SidecarChange, SidecarView } from './ads-server.js';
export { createXdsGrpcServer } from './xds-grpc-server.js';
export type { XdsGrpcServer, XdsTlsSettings } from './xds-grpc-server.js';
