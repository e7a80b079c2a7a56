// gRPC channel credentials, options and stream metadata for the ADS connection, from the typed xDS settings.
import { credentials, Metadata, type ChannelCredentials, type ChannelOptions } from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { XdsClientSettings } from './xds-client-settings.js';

export class XdsTlsError extends Error {
  readonly code = 'tls_files';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'XdsTlsError';
  }
}

function readFile(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new XdsTlsError(`cannot read ${what} ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Plaintext, or TLS trusting the system roots plus CONFIG_GRPC_XDS_SERVER_TLS_CACERT, presenting the client
 * certificate when both files are set. Files are read once, as upstream does.
 * @throws XdsTlsError when a named file cannot be read.
 */
export function xdsChannelCredentials(s: XdsClientSettings): ChannelCredentials {
  if (!s.serverUseTls) return credentials.createInsecure();
  const roots = [...rootCertificates, ...(s.serverTlsCaCert ? [readFile(s.serverTlsCaCert, 'CA').toString()] : [])];
  const hasClientCert = s.clientTlsCert !== '' && s.clientTlsKey !== '';
  return credentials.createSsl(
    Buffer.from(roots.join('\n')),
    hasClientCert ? readFile(s.clientTlsKey, 'client key') : null,
    hasClientCert ? readFile(s.clientTlsCert, 'client certificate') : null,
  );
}

export function xdsChannelOptions(s: XdsClientSettings): ChannelOptions {
  const options: ChannelOptions = {
    'grpc.keepalive_time_ms': 60_000,
    'grpc.keepalive_timeout_ms': 10_000,
  };
  if (s.serverUseTls && s.serverTlsSan !== '') options['grpc.ssl_target_name_override'] = s.serverTlsSan;
  if (s.maxMsgSizeInBytes > 0) options['grpc.max_receive_message_length'] = s.maxMsgSizeInBytes;
  return options;
}

export function xdsStreamMetadata(s: XdsClientSettings): Metadata {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(s.clientAdditionalHeaders)) metadata.add(key.toLowerCase(), value);
  return metadata;
}
