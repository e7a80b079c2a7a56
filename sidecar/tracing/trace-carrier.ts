// Where a request's trace headers come from: the gRPC metadata or HTTP headers the servers already hold.
import type { TextMapGetter } from '@opentelemetry/api';

/** grpc-js Metadata, as far as trace extraction needs it. */
export interface MetadataCarrier {
  get(key: string): readonly (string | Buffer)[];
  getMap(): Readonly<Record<string, string | Buffer>>;
}

/** Node's IncomingHttpHeaders (lower-case names). */
export type HeaderCarrier = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * What a server passes with a request so that tracing can find `traceparent`/`b3` headers. Servers pass the object
 * they already have (no copy), so a disabled tracer costs nothing per request.
 */
export type TraceCarrier = MetadataCarrier | HeaderCarrier;

/** True for gRPC metadata; HTTP headers are plain objects whose values are never functions. */
export function isMetadataCarrier(carrier: TraceCarrier): carrier is MetadataCarrier {
  return typeof (carrier as MetadataCarrier).getMap === 'function';
}

export const metadataGetter: TextMapGetter<MetadataCarrier> = {
  keys: (carrier) => Object.keys(carrier.getMap()),
  get(carrier, key) {
    const values = carrier.get(key);
    if (values.length === 0) return undefined;
    return values.map((v) => (typeof v === 'string' ? v : v.toString('latin1')));
  },
};

export const headerGetter: TextMapGetter<HeaderCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key.toLowerCase()];
    return value === undefined ? undefined : typeof value === 'string' ? value : [...value];
  },
};
