// Typed settings of the speech gateway and its admin CLI, parsed once from the environment (spec A.7).
import os from 'node:os';
import path from 'node:path';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type LogFormat = 'text' | 'json';

export interface SpeechSettings {
  /** HTTP port of the gateway (PORT, default 8000; 0 lets the OS pick). */
  readonly port: number;
  /** Listen address (HOST, default 0.0.0.0). */
  readonly host: string;
  /** PostgreSQL connection string (DATABASE_URL); null selects PGlite in dataDir. */
  readonly databaseUrl: string | null;
  /** Directory of the embedded PGlite store (DATA_DIR, default ./data), resolved to an absolute path. */
  readonly dataDir: string;
  /** gRPC address of a remote engine server (ENGINE_URL); null runs the engine in process. */
  readonly engineUrl: string | null;
  /** Engine worker threads (ENGINE_WORKERS, default: number of cores), at least 1. */
  readonly engineWorkers: number;
  /** Rate limit sidecar gRPC address (RATELIMIT_GRPC_URL); null uses the in-process limiter. */
  readonly ratelimitGrpcUrl: string | null;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

/** A bad environment value; the message is one line naming the variable and the accepted values. */
export class SettingsError extends Error {
  constructor(
    readonly code: 'invalid_value',
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'SettingsError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function nonEmpty(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined) return null;
  const trimmed = raw.trim();
  return trimmed === '' ? null : trimmed;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env, name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) {
    throw new SettingsError('invalid_value', name, `${name}=${JSON.stringify(raw)}: expected an integer ${min}-${max}`);
  }
  const value = Number(raw);
  if (value < min || value > max) {
    throw new SettingsError('invalid_value', name, `${name}=${raw}: expected an integer ${min}-${max}`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = nonEmpty(env, name);
  if (raw === null) return fallback;
  const lower = raw.toLowerCase();
  const found = allowed.find((a) => a === lower);
  if (found === undefined) {
    throw new SettingsError(
      'invalid_value',
      name,
      `${name}=${JSON.stringify(raw)}: expected one of ${allowed.join(', ')}`,
    );
  }
  return found;
}

function databaseUrl(env: Env): string | null {
  const raw = nonEmpty(env, 'DATABASE_URL');
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new SettingsError(
      'invalid_value',
      'DATABASE_URL',
      'DATABASE_URL: not a URL (expected postgres://user:pass@host:port/db)',
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new SettingsError(
      'invalid_value',
      'DATABASE_URL',
      `DATABASE_URL: scheme ${parsed.protocol} is not supported (expected postgres:// or postgresql://)`,
    );
  }
  return raw;
}

function grpcAddress(env: Env, name: string): string | null {
  const raw = nonEmpty(env, name);
  if (raw === null) return null;
  // host:port (optionally grpc:// or http://, plaintext), dns:///host:port, unix:/path; reject a missing port.
  if (!/^(unix:.+|(grpc:\/\/|http:\/\/|dns:\/\/\/|ipv4:|ipv6:)?[^\s/]+:\d{1,5}\/?)$/.test(raw)) {
    throw new SettingsError('invalid_value', name, `${name}=${JSON.stringify(raw)}: expected host:port or unix:/path`);
  }
  return raw;
}

/** Parses the environment; throws SettingsError on the first bad value. Only main programs call this. */
export function loadSpeechSettings(env: Env, cwd: string = process.cwd()): SpeechSettings {
  const dataDirRaw = nonEmpty(env, 'DATA_DIR') ?? './data';
  const cores = Math.max(1, os.availableParallelism());
  return {
    port: integer(env, 'PORT', 8000, 0, 65535),
    host: nonEmpty(env, 'HOST') ?? '0.0.0.0',
    databaseUrl: databaseUrl(env),
    dataDir: path.resolve(cwd, dataDirRaw),
    engineUrl: grpcAddress(env, 'ENGINE_URL'),
    engineWorkers: integer(env, 'ENGINE_WORKERS', cores, 1, 256),
    ratelimitGrpcUrl: grpcAddress(env, 'RATELIMIT_GRPC_URL'),
    logLevel: oneOf(env, 'LOG_LEVEL', ['error', 'warn', 'info', 'debug'] as const, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['text', 'json'] as const, 'text'),
  };
}
