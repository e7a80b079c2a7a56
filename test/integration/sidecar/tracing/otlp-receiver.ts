// A local OTLP/HTTP (JSON) trace endpoint for tests: collects every span it is sent, with its resource.
import http from 'node:http';

export interface ReceivedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly kind: number;
  readonly attributes: ReadonlyMap<string, string | number | boolean>;
  readonly resource: ReadonlyMap<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>/v1/traces`. */
  readonly url: string;
  spans(): readonly ReceivedSpan[];
  stop(): Promise<void>;
}

interface JsonAnyValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}
interface JsonSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  kind: number;
  attributes?: JsonKeyValue[];
}
interface JsonRequest {
  resourceSpans?: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: { spans?: JsonSpan[] }[] }[];
}

function attributeMap(list: readonly JsonKeyValue[] | undefined): Map<string, string | number | boolean> {
  const map = new Map<string, string | number | boolean>();
  for (const { key, value } of list ?? []) {
    const v = value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.intValue;
    if (v !== undefined) map.set(key, typeof v === 'string' && value.intValue !== undefined ? Number(v) : v);
  }
  return map;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonRequest;
      for (const rs of body.resourceSpans ?? []) {
        const resource = attributeMap(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            received.push({
              name: s.name,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              kind: s.kind,
              attributes: attributeMap(s.attributes),
              resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans: () => received,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
