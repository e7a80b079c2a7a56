// TLS options for connections to Redis (REDIS_TLS, REDIS_TLS_CLIENT_CERT/_KEY, REDIS_TLS_CACERT, skip hostname).
import { rootCertificates, type ConnectionOptions } from 'node:tls';

/** TLS to one Redis; PEM contents, read from the REDIS_TLS_* files by main. */
export interface RedisTlsOptions {
  /** Client certificate chain for mTLS; set together with keyPem, or neither. */
  readonly certPem?: string;
  readonly keyPem?: string;
  /** An extra CA, trusted in addition to the system roots (upstream appends REDIS_TLS_CACERT to the system pool). */
  readonly caPem?: string;
  /** Verify the chain but not the host name (REDIS_TLS_SKIP_HOSTNAME_VERIFICATION, e.g. GCP Memorystore). */
  readonly skipHostnameVerification: boolean;
}

/** Node TLS connect options for ioredis. */
export function buildRedisTlsOptions(options: RedisTlsOptions): ConnectionOptions {
  const out: ConnectionOptions = {};
  if (options.caPem !== undefined && options.caPem !== '') out.ca = [...rootCertificates, options.caPem];
  if (options.certPem !== undefined && options.certPem !== '') out.cert = options.certPem;
  if (options.keyPem !== undefined && options.keyPem !== '') out.key = options.keyPem;
  // The chain is still verified (rejectUnauthorized stays true); only the name check is skipped.
  if (options.skipHostnameVerification) out.checkServerIdentity = () => undefined;
  return out;
}
