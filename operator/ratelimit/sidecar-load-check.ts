// The one validator: runs the sidecar's own loader on a CR's encoded resource, exactly as a sidecar would on receipt.
import { RateLimitConfig as RateLimitConfigProto } from '../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';
import { loadRateLimitConfig, xdsConfigToSource } from '../../sidecar/config/index.js';
import type { XdsResource } from '../xds/snapshot-cache.js';

/** undefined when the sidecar would load this resource on its own; else the sidecar's `<name>: <reason>` message. */
export function sidecarLoadCheck(resource: XdsResource): string | undefined {
  try {
    const decoded = RateLimitConfigProto.decode(resource.any.value);
    loadRateLimitConfig([xdsConfigToSource(decoded)], { mergeDomainConfig: false });
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
