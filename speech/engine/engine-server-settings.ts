// Environment of chorus-speech-engine, parsed once into typed settings.
import os from 'node:os';

export type EngineLogLevel = 'error' | 'warn' | 'info' | 'debug';

export interface EngineServerSettings {
  /** gRPC port; 0 lets the OS pick (the bound port is logged). */
  readonly port: number;
  readonly host: string;
  /** espeak worker threads. */
  readonly workers: number;
  /** Syntheses that may wait for a worker before RESOURCE_EXHAUSTED. */
  readonly maxQueue: number;
  /** Model ids served (MODEL_ID, comma-separated); empty serves every model. */
  readonly modelIds: readonly string[];
  readonly logLevel: EngineLogLevel;
  readonly logFormat: 'text' | 'json';
}

export class EngineSettingsError extends Error {
  readonly code = 'invalid_value' as const;
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'EngineSettingsError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new EngineSettingsError(name, `${name}=${JSON.stringify(raw)}: expected an integer from ${min} to ${max}`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  const found = allowed.find((a) => a === raw);
  if (found === undefined) {
    throw new EngineSettingsError(name, `${name}=${JSON.stringify(raw)}: expected one of ${allowed.join(', ')}`);
  }
  return found;
}

const MODEL_ID = /^[a-z0-9][a-z0-9.-]*$/;

/** Parses the environment; throws EngineSettingsError naming the first bad variable. */
export function loadEngineServerSettings(env: Env): EngineServerSettings {
  const workers = integer(env, 'ENGINE_WORKERS', Math.max(1, os.availableParallelism()), 1, 256);
  const modelIds = (env.MODEL_ID ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  for (const m of modelIds) {
    if (!MODEL_ID.test(m)) throw new EngineSettingsError('MODEL_ID', `MODEL_ID: invalid model id ${JSON.stringify(m)}`);
  }
  return {
    port: integer(env, 'PORT', 9000, 0, 65535),
    host: env.HOST?.trim() || '0.0.0.0',
    workers,
    maxQueue: integer(env, 'ENGINE_MAX_QUEUE', workers * 64, 0, 100_000),
    modelIds,
    logLevel: oneOf(env, 'LOG_LEVEL', ['error', 'warn', 'info', 'debug'] as const, 'info'),
    logFormat: oneOf(env, 'LOG_FORMAT', ['text', 'json'] as const, 'text'),
  };
}
