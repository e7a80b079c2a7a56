// TLS and mTLS for the gRPC listener: certificate files re-read on an interval, optional client SAN check (spec §1.8).
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import type { PeerCertificate } from 'node:tls';
import { SettingsError } from '../settings/settings-error.js';

export interface GrpcTlsSettings {
  /** GRPC_SERVER_TLS_CERT: the server certificate chain (PEM). */
  readonly certFile: string;
  /** GRPC_SERVER_TLS_KEY: its private key (PEM). */
  readonly keyFile: string;
  /** GRPC_CLIENT_TLS_CACERT: when non-empty, a client certificate signed by this CA is required. */
  readonly clientCaFile: string;
  /** GRPC_CLIENT_TLS_SAN: when non-empty, the client certificate must name this DNS SAN. */
  readonly clientSan: string;
  /** How often the files are re-read; rotated certificates apply to new connections. */
  readonly refreshIntervalMs: number;
}

// The client-auth extended key usage (RFC 5280).
const CLIENT_AUTH_EKU = '1.3.6.1.5.5.7.3.2';

function requireReadable(variable: string, file: string): void {
  if (file === '') {
    throw new SettingsError(
      'invalid_value',
      variable,
      `${variable} must name a PEM file when GRPC_SERVER_USE_TLS=true`,
    );
  }
  try {
    readFileSync(file);
  } catch (err) {
    // Upstream is fatal when the first load fails; later failures keep the previous certificate.
    throw new SettingsError(
      'invalid_value',
      variable,
      `cannot read ${variable} file ${JSON.stringify(file)}: ${(err as Error).message}`,
    );
  }
}

/** Resolves once the provider has delivered its first certificates (it reads the files asynchronously). */
function firstUpdate(provider: grpc.experimental.CertificateProvider, kind: 'ca' | 'identity'): Promise<void> {
  return new Promise<void>((resolve) => {
    const listener = (update: unknown): void => {
      if (update === null) return;
      if (kind === 'ca') provider.removeCaCertificateListener(listener);
      else provider.removeIdentityCertificateListener(listener);
      resolve();
    };
    if (kind === 'ca') provider.addCaCertificateListener(listener);
    else provider.addIdentityCertificateListener(listener);
  });
}

export interface GrpcServerCredentials {
  readonly credentials: grpc.ServerCredentials;
  /** Resolves when the certificates are loaded; bind only after it, or the first handshakes fail. */
  readonly ready: Promise<void>;
}

/**
 * Server credentials that re-read the certificate files every refreshIntervalMs.
 * @throws SettingsError when a file is missing or unreadable at startup
 */
export function createGrpcServerCredentials(settings: GrpcTlsSettings): GrpcServerCredentials {
  requireReadable('GRPC_SERVER_TLS_CERT', settings.certFile);
  requireReadable('GRPC_SERVER_TLS_KEY', settings.keyFile);
  if (settings.clientCaFile !== '') requireReadable('GRPC_CLIENT_TLS_CACERT', settings.clientCaFile);
  const identity = new grpc.experimental.FileWatcherCertificateProvider({
    certificateFile: settings.certFile,
    privateKeyFile: settings.keyFile,
    refreshIntervalMs: settings.refreshIntervalMs,
  });
  const ca =
    settings.clientCaFile === ''
      ? null
      : new grpc.experimental.FileWatcherCertificateProvider({
          caCertificateFile: settings.clientCaFile,
          refreshIntervalMs: settings.refreshIntervalMs,
        });
  const ready = Promise.all([firstUpdate(identity, 'identity'), ca === null ? undefined : firstUpdate(ca, 'ca')]).then(
    () => undefined,
  );
  // grpc-js 1.14 declares the parameters as (ca, identity) but its implementation takes (identity, ca | null).
  return {
    credentials: grpc.experimental.createCertificateProviderServerCredentials(identity, ca, ca !== null),
    ready,
  };
}

/**
 * Whether a verified client certificate may call: it must list `DNS:<san>` among its subject alternative names
 * and, when it has an extended key usage, allow client authentication (as Go's x509 Verify with ExtKeyUsageClientAuth).
 */
export function clientCertificateAllowed(cert: PeerCertificate | undefined, san: string): boolean {
  if (cert === undefined || cert.subjectaltname === undefined) return false;
  const names = cert.subjectaltname.split(',').map((s) => s.trim());
  if (!names.includes(`DNS:${san}`)) return false;
  const eku = (cert as PeerCertificate & { ext_key_usage?: string[] }).ext_key_usage;
  return eku === undefined || eku.length === 0 || eku.includes(CLIENT_AUTH_EKU);
}
