// Parses a RateLimitConfig object from the API server into the typed, readonly form the controller uses (once, at the edge).
import {
  CRD_UNITS,
  type CrdUnit,
  type DescriptorSpec,
  type RateLimitConfigObject,
  type RateLimitConfigSpec,
  type RateLimitConfigStatus,
  type RateLimitPolicySpec,
} from '../crd/ratelimitconfig-types.js';

/** A spec that does not have the CRD's shape (only possible if the CRD schema was bypassed or is older). */
export class SpecParseError extends Error {
  readonly code = 'invalid_spec';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'SpecParseError';
  }
}

type Json = Record<string, unknown>;

function obj(value: unknown, path: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new SpecParseError(path, 'must be an object');
  return value as Json;
}

function str(value: unknown, path: string, fallback?: string): string {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'string') throw new SpecParseError(path, 'must be a string');
  return value;
}

function bool(value: unknown, path: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new SpecParseError(path, 'must be a boolean');
  return value;
}

function list(value: unknown, path: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new SpecParseError(path, 'must be a list');
  return value;
}

function parsePolicy(value: unknown, path: string): RateLimitPolicySpec {
  const p = obj(value, path);
  let unit: CrdUnit | undefined;
  if (p.unit !== undefined) {
    const u = str(p.unit, `${path}.unit`);
    if (!(CRD_UNITS as readonly string[]).includes(u)) throw new SpecParseError(`${path}.unit`, `unknown unit '${u}'`);
    unit = u as CrdUnit;
  }
  let requestsPerUnit: number | undefined;
  if (p.requestsPerUnit !== undefined) {
    const n = p.requestsPerUnit;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 4294967295) {
      throw new SpecParseError(`${path}.requestsPerUnit`, 'must be an integer in 0..4294967295');
    }
    requestsPerUnit = n;
  }
  return {
    ...(unit !== undefined ? { unit } : {}),
    ...(requestsPerUnit !== undefined ? { requestsPerUnit } : {}),
    unlimited: bool(p.unlimited, `${path}.unlimited`),
    ...(p.name !== undefined ? { name: str(p.name, `${path}.name`) } : {}),
    replaces: list(p.replaces, `${path}.replaces`).map((r, i) => ({
      name: str(obj(r, `${path}.replaces[${i}]`).name, `${path}.replaces[${i}].name`),
    })),
  };
}

function parseDescriptor(value: unknown, path: string): DescriptorSpec {
  const d = obj(value, path);
  return {
    key: str(d.key, `${path}.key`),
    value: str(d.value, `${path}.value`, ''),
    ...(d.rateLimit !== undefined ? { rateLimit: parsePolicy(d.rateLimit, `${path}.rateLimit`) } : {}),
    shadowMode: bool(d.shadowMode, `${path}.shadowMode`),
    detailedMetric: bool(d.detailedMetric, `${path}.detailedMetric`),
    quotaMode: bool(d.quotaMode, `${path}.quotaMode`),
    ...(d.metadata !== undefined ? { metadata: obj(d.metadata, `${path}.metadata`) } : {}),
    descriptors: list(d.descriptors, `${path}.descriptors`).map((c, i) =>
      parseDescriptor(c, `${path}.descriptors[${i}]`),
    ),
  };
}

/** @throws SpecParseError naming the offending path. */
export function parseRateLimitConfigSpec(value: unknown): RateLimitConfigSpec {
  const spec = obj(value, 'spec');
  return {
    domain: str(spec.domain, 'spec.domain'),
    descriptors: list(spec.descriptors, 'spec.descriptors').map((d, i) => parseDescriptor(d, `spec.descriptors[${i}]`)),
  };
}

/** Identity, spec (or why it did not parse) and current status of one watched object. */
export function parseRateLimitConfigObject(raw: Record<string, unknown>): RateLimitConfigObject {
  const metadata = obj(raw.metadata, 'metadata');
  let spec: RateLimitConfigSpec | undefined;
  let parseError = '';
  try {
    spec = parseRateLimitConfigSpec(raw.spec);
  } catch (err) {
    parseError = err instanceof SpecParseError ? err.message : String(err);
  }
  const status = raw.status !== null && typeof raw.status === 'object' ? (raw.status as RateLimitConfigStatus) : {};
  return {
    namespace: str(metadata.namespace, 'metadata.namespace'),
    name: str(metadata.name, 'metadata.name'),
    uid: str(metadata.uid, 'metadata.uid', ''),
    generation: typeof metadata.generation === 'number' ? metadata.generation : 0,
    resourceVersion: str(metadata.resourceVersion, 'metadata.resourceVersion', ''),
    creationTimestamp: str(metadata.creationTimestamp, 'metadata.creationTimestamp', ''),
    spec,
    parseError,
    status,
  };
}
