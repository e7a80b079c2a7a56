// The operator's settings, parsed once from the environment (only main.ts passes process.env).

export class SettingsError extends Error {
  readonly code = 'invalid_setting';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'SettingsError';
  }
}

export interface OperatorSettings {
  /** KUBECONFIG; '' = in-cluster config, else ~/.kube/config. */
  readonly kubeconfig: string;
  readonly adsPort: number;
  readonly httpPort: number;
  /** Bind address of both servers. */
  readonly host: string;
  readonly watchNamespaces: readonly string[];
  readonly globalNamespaces: readonly string[];
  readonly leaderElection: boolean;
  readonly leaseName: string;
  readonly leaseNamespace: string;
  readonly leaseDurationSeconds: number;
  /** POD_NAME (or the hostname): the lease identity, the ADS control_plane id and the pod to label. */
  readonly podName: string;
  readonly podNamespace: string;
  /** Label set on the leader's pod; the ADS Service selects it (D4). */
  readonly leaderLabel: string;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  readonly logFormat: 'text' | 'json';
  readonly statusDebounceMs: number;
  readonly maxResourceBytes: number;
  /** D8: server TLS when certFile and keyFile are set; mTLS when clientCaFile is set too. */
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly tlsClientCaFile: string;
  readonly shutdownGraceMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new SettingsError(name, `must be an integer in ${min}..${max}, got '${raw}'`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (raw === '') return fallback;
  if (['1', 't', 'true', 'yes'].includes(raw)) return true;
  if (['0', 'f', 'false', 'no'].includes(raw)) return false;
  throw new SettingsError(name, `must be true or false, got '${env[name]}'`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = (env[name] ?? '').toLowerCase();
  if (raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw))
    throw new SettingsError(name, `must be one of ${allowed.join(', ')}`);
  return raw as T;
}

/** @throws SettingsError naming the variable. */
export function loadOperatorSettings(env: Env, hostname: string): OperatorSettings {
  const podNamespace = env.POD_NAMESPACE ?? 'default';
  const settings: OperatorSettings = {
    kubeconfig: env.KUBECONFIG ?? '',
    adsPort: int(env, 'ADS_PORT', 18000, 0, 65535),
    httpPort: int(env, 'HTTP_PORT', 8081, 0, 65535),
    host: env.HOST ?? '0.0.0.0',
    watchNamespaces: list(env.WATCH_NAMESPACES),
    globalNamespaces: list(env.GLOBAL_NAMESPACES),
    leaderElection: bool(env, 'LEADER_ELECTION', true),
    leaseName: env.LEASE_NAME || 'chorus-operator',
    leaseNamespace: env.LEASE_NAMESPACE || podNamespace,
    leaseDurationSeconds: int(env, 'LEASE_DURATION_SECONDS', 15, 2, 3600),
    podName: env.POD_NAME || hostname,
    podNamespace,
    leaderLabel: env.LEADER_LABEL || 'chorus.dev/ads-leader',
    logLevel: oneOf(env, 'LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['text', 'json'] as const, 'text'),
    statusDebounceMs: int(env, 'STATUS_DEBOUNCE_MS', 1000, 0, 600_000),
    maxResourceBytes: int(env, 'MAX_RESOURCE_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    tlsCertFile: env.ADS_TLS_CERT ?? '',
    tlsKeyFile: env.ADS_TLS_KEY ?? '',
    tlsClientCaFile: env.ADS_TLS_CLIENT_CA ?? '',
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 5000, 0, 600_000),
  };
  if ((settings.tlsCertFile === '') !== (settings.tlsKeyFile === '')) {
    throw new SettingsError('ADS_TLS_CERT', 'ADS_TLS_CERT and ADS_TLS_KEY must be set together');
  }
  if (settings.tlsClientCaFile !== '' && settings.tlsCertFile === '') {
    throw new SettingsError('ADS_TLS_CLIENT_CA', 'mTLS needs ADS_TLS_CERT and ADS_TLS_KEY too');
  }
  return settings;
}
