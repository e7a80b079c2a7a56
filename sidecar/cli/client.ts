#!/usr/bin/env node
// chorus-ratelimit-client: one ShouldRateLimit call from the command line, with upstream ratelimit_client's flags.
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { RateLimitDescriptor } from '../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js';
import {
  RateLimitServiceClient,
  type RateLimitResponse,
  type RateLimitResponse_DescriptorStatus,
} from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';

/** A command line the client refuses; printed with the usage, exit status 2 as Go's flag package. */
export class UsageError extends Error {
  readonly code = 'usage';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface ClientFlags {
  readonly dialString: string;
  readonly domain: string;
  readonly descriptors: readonly RateLimitDescriptor[];
  readonly grpcUseTls: boolean;
  readonly grpcServerCaFile: string;
  readonly grpcCertFile: string;
  readonly grpcKeyFile: string;
  /** Accepted for compatibility; this client does not export traces. */
  readonly oltpProtocol: string;
  readonly help: boolean;
}

const USAGE = `Usage of chorus-ratelimit-client:
  -descriptors value
    \tdescriptor list to query in <key>=<value>,<key>=<value>,... form
  -dial_string string
    \turl of ratelimit server in <host>:<port> form (default "localhost:8081")
  -domain string
    \trate limit configuration domain to query
  -grpc-cert-file string
    \tclient certificate file for mTLS
  -grpc-key-file string
    \tclient key file for mTLS
  -grpc-server-ca-file string
    \tCA file that verifies the server certificate
  -grpc-use-tls
    \tuse TLS to the server
  -oltp-protocol string
    \taccepted for compatibility; tracing is not exported by this client
`;

/** One `-descriptors` value: `k=v,k2=v2`; every pair needs exactly one `=`. */
export function parseDescriptor(arg: string): RateLimitDescriptor {
  const entries = arg.split(',').map((pair) => {
    const parts = pair.split('=');
    if (parts.length !== 2) throw new UsageError('invalid descriptor list');
    return { key: parts[0] ?? '', value: parts[1] ?? '' };
  });
  return { entries, limit: undefined, hitsAddend: undefined };
}

const STRING_FLAGS = new Set([
  'dial_string',
  'domain',
  'descriptors',
  'grpc-server-ca-file',
  'grpc-cert-file',
  'grpc-key-file',
  'oltp-protocol',
]);
const BOOL_FLAGS = new Set(['grpc-use-tls', 'h', 'help']);
const TRUE_VALUES = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_VALUES = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/**
 * Parses arguments with Go's flag rules: `-name value`, `-name=value`, `--name`, boolean flags take no separate
 * value; parsing stops at the first non-flag argument or after `--`.
 * @throws UsageError for an unknown flag, a missing value or a bad descriptor
 */
export function parseClientFlags(args: readonly string[]): ClientFlags {
  const strings = new Map<string, string>();
  const bools = new Map<string, boolean>();
  const descriptors: RateLimitDescriptor[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') break;
    if (!arg.startsWith('-') || arg === '-') break;
    const body = arg.startsWith('--') ? arg.slice(2) : arg.slice(1);
    if (body === '' || body.startsWith('-') || body.startsWith('=')) throw new UsageError(`bad flag syntax: ${arg}`);
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const inline = eq < 0 ? undefined : body.slice(eq + 1);
    if (BOOL_FLAGS.has(name)) {
      if (inline === undefined) bools.set(name, true);
      else if (TRUE_VALUES.has(inline)) bools.set(name, true);
      else if (FALSE_VALUES.has(inline)) bools.set(name, false);
      else throw new UsageError(`invalid boolean value "${inline}" for -${name}: parse error`);
      continue;
    }
    if (!STRING_FLAGS.has(name)) throw new UsageError(`flag provided but not defined: -${name}`);
    let value = inline;
    if (value === undefined) {
      if (i + 1 >= args.length) throw new UsageError(`flag needs an argument: -${name}`);
      value = args[++i] ?? '';
    }
    if (name === 'descriptors') {
      try {
        descriptors.push(parseDescriptor(value));
      } catch (err) {
        throw new UsageError(`invalid value "${value}" for flag -descriptors: ${(err as Error).message}`);
      }
    } else strings.set(name, value);
  }
  return {
    dialString: strings.get('dial_string') ?? 'localhost:8081',
    domain: strings.get('domain') ?? '',
    descriptors,
    grpcUseTls: bools.get('grpc-use-tls') ?? false,
    grpcServerCaFile: strings.get('grpc-server-ca-file') ?? '',
    grpcCertFile: strings.get('grpc-cert-file') ?? '',
    grpcKeyFile: strings.get('grpc-key-file') ?? '',
    oltpProtocol: strings.get('oltp-protocol') ?? '',
    help: (bools.get('h') ?? false) || (bools.get('help') ?? false),
  };
}

/** The `descriptors:` line as upstream prints it: `[ <key=k, value=v>  <key=k2, value=v2> ] ` per descriptor. */
export function formatDescriptors(descriptors: readonly RateLimitDescriptor[]): string {
  let out = '';
  for (const d of descriptors) {
    let inner = '';
    for (const e of d.entries) inner += ` <key=${e.key}, value=${e.value}> `;
    out += `[${inner}] `;
  }
  return out;
}

/** Go's %q for the printable strings flags hold: JSON quoting, with \\x escapes for control bytes. */
function goQuote(value: string): string {
  return JSON.stringify(value).replace(/\\u00([0-9a-f]{2})/g, '\\x$1');
}

/** Every flag in name order, as upstream prints them with flag.VisitAll: `Flag: --name="value"`. */
export function formatFlags(flags: ClientFlags): string[] {
  const values: [string, string][] = [
    ['descriptors', formatDescriptors(flags.descriptors)],
    ['dial_string', flags.dialString],
    ['domain', flags.domain],
    ['grpc-cert-file', flags.grpcCertFile],
    ['grpc-key-file', flags.grpcKeyFile],
    ['grpc-server-ca-file', flags.grpcServerCaFile],
    ['grpc-use-tls', String(flags.grpcUseTls)],
    ['oltp-protocol', flags.oltpProtocol],
  ];
  return values.map(([name, value]) => `Flag: --${name}=${goQuote(value)}`);
}

// ---- protobuf text format of a response (Go's compact prototext, single spaces) ----

const CODE_NAMES = ['UNKNOWN', 'OK', 'OVER_LIMIT'];
const UNIT_NAMES = ['UNKNOWN', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'MONTH', 'YEAR', 'WEEK'];

function quote(s: string): string {
  let out = '"';
  for (const byte of Buffer.from(s, 'utf8')) {
    if (byte === 0x22) out += '\\"';
    else if (byte === 0x5c) out += '\\\\';
    else if (byte === 0x0a) out += '\\n';
    else if (byte === 0x0d) out += '\\r';
    else if (byte === 0x09) out += '\\t';
    else if (byte < 0x20 || byte >= 0x7f) out += '\\' + byte.toString(8).padStart(3, '0');
    else out += String.fromCharCode(byte);
  }
  return out + '"';
}

function structValueText(v: unknown): string {
  if (v === null || v === undefined) return 'null_value:NULL_VALUE';
  if (typeof v === 'number') return `number_value:${v}`;
  if (typeof v === 'string') return `string_value:${quote(v)}`;
  if (typeof v === 'boolean') return `bool_value:${v}`;
  if (Array.isArray(v)) return `list_value:{${v.map((x) => `values:{${structValueText(x)}}`).join(' ')}}`;
  return `struct_value:{${structText(v as Record<string, unknown>)}}`;
}

function structText(obj: Record<string, unknown>): string {
  return Object.keys(obj)
    .sort()
    .map((k) => `fields:{key:${quote(k)} value:{${structValueText(obj[k])}}}`)
    .join(' ');
}

function statusText(s: RateLimitResponse_DescriptorStatus): string {
  const parts: string[] = [];
  if (s.code !== 0) parts.push(`code:${CODE_NAMES[s.code] ?? s.code}`);
  if (s.currentLimit !== undefined) {
    const l = s.currentLimit;
    // Declaration order, as Go prints it: `name` is declared first although its number is 3.
    const inner: string[] = [];
    if (l.name !== '') inner.push(`name:${quote(l.name)}`);
    if (l.requestsPerUnit !== 0) inner.push(`requests_per_unit:${l.requestsPerUnit}`);
    if (l.unit !== 0) inner.push(`unit:${UNIT_NAMES[l.unit] ?? l.unit}`);
    parts.push(`current_limit:{${inner.join(' ')}}`);
  }
  if (s.limitRemaining !== 0) parts.push(`limit_remaining:${s.limitRemaining}`);
  if (s.durationUntilReset !== undefined) {
    const d = s.durationUntilReset;
    const inner: string[] = [];
    if (d.seconds !== 0) inner.push(`seconds:${d.seconds}`);
    if (d.nanos !== 0) inner.push(`nanos:${d.nanos}`);
    parts.push(`duration_until_reset:{${inner.join(' ')}}`);
  }
  return parts.join(' ');
}

/** The text form Go's `response.String()` gives (declaration order, zero values omitted, single spaces). */
export function formatResponse(r: RateLimitResponse): string {
  const parts: string[] = [];
  if (r.overallCode !== 0) parts.push(`overall_code:${CODE_NAMES[r.overallCode] ?? r.overallCode}`);
  for (const s of r.statuses) parts.push(`statuses:{${statusText(s)}}`);
  for (const h of r.responseHeadersToAdd)
    parts.push(`response_headers_to_add:{key:${quote(h.key)} value:${quote(h.value)}}`);
  for (const h of r.requestHeadersToAdd)
    parts.push(`request_headers_to_add:{key:${quote(h.key)} value:${quote(h.value)}}`);
  if (r.dynamicMetadata !== undefined) parts.push(`dynamic_metadata:{${structText(r.dynamicMetadata)}}`);
  return parts.join(' ');
}

function credentialsFor(flags: ClientFlags): grpc.ChannelCredentials {
  if (!flags.grpcUseTls) return grpc.credentials.createInsecure();
  const ca = flags.grpcServerCaFile === '' ? null : readFileSync(flags.grpcServerCaFile);
  const key = flags.grpcKeyFile === '' ? null : readFileSync(flags.grpcKeyFile);
  const cert = flags.grpcCertFile === '' ? null : readFileSync(flags.grpcCertFile);
  return grpc.credentials.createSsl(ca, key, cert);
}

// grpc-go's names for status codes, used in its error text `rpc error: code = Unknown desc = …`.
const GO_CODE_NAMES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

function goErrorText(err: unknown): string {
  const e = err as Partial<grpc.ServiceError>;
  if (typeof e.code === 'number') {
    return `rpc error: code = ${GO_CODE_NAMES[e.code] ?? `Code(${e.code})`} desc = ${e.details ?? ''}`;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * Runs the client; returns the exit status.
 * @param out standard output (the flags, the response, request errors, as upstream)
 * @param err standard error (usage and flag errors, as Go's flag package)
 */
export async function runClient(
  args: readonly string[],
  out: (line: string) => void,
  err: (line: string) => void = out,
): Promise<number> {
  let flags: ClientFlags;
  try {
    flags = parseClientFlags(args);
  } catch (e) {
    err((e as Error).message);
    err(USAGE.trimEnd());
    return 2;
  }
  if (flags.help) {
    err(USAGE.trimEnd());
    return 0;
  }
  for (const line of formatFlags(flags)) out(line);
  let client: InstanceType<typeof RateLimitServiceClient>;
  try {
    client = new RateLimitServiceClient(flags.dialString, credentialsFor(flags));
  } catch (err) {
    out(`error connecting: ${(err as Error).message}`);
    return 1;
  }
  try {
    const response = await new Promise<RateLimitResponse>((resolve, reject) => {
      client.shouldRateLimit(
        { domain: flags.domain, descriptors: [...flags.descriptors], hitsAddend: 1 },
        new grpc.Metadata(),
        { deadline: Date.now() + 30_000 },
        (err, res) => (err !== null ? reject(err) : resolve(res)),
      );
    });
    out(`response: ${formatResponse(response)}`);
    return 0;
  } catch (err) {
    out(`request error: ${goErrorText(err)}`);
    return 1;
  } finally {
    client.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runClient(
    process.argv.slice(2),
    (line) => process.stdout.write(line + '\n'),
    (line) => process.stderr.write(line + '\n'),
  ).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
