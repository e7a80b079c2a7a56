// ShouldRateLimit over gRPC and /json over HTTP against any rate limit service, with errors captured as values.
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import {
  RateLimitRequest,
  RateLimitResponse,
  RateLimitServiceClient,
} from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';

/** What a ShouldRateLimit call produced: a response, or a gRPC error status with its message. */
export type GrpcOutcome =
  | { readonly kind: 'response'; readonly response: RateLimitResponse }
  | { readonly kind: 'error'; readonly code: number; readonly message: string };

/** What an HTTP call produced: status, content type and the body (parsed when it is JSON). */
export interface HttpOutcome {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  /** The parsed body when the content type is JSON; undefined otherwise. */
  readonly json: unknown;
}

/** A reusable gRPC channel to one service. */
export interface RlsClient {
  /** Never rejects: transport and status errors come back as `{kind: 'error'}`. */
  shouldRateLimit(request: RateLimitRequest, timeoutMs?: number): Promise<GrpcOutcome>;
  close(): void;
}

export function createRlsClient(address: string): RlsClient {
  const client = new RateLimitServiceClient(address, credentials.createInsecure());
  return {
    shouldRateLimit(request, timeoutMs = 5000) {
      return new Promise((resolve) => {
        client.shouldRateLimit(
          request,
          new Metadata(),
          { deadline: Date.now() + timeoutMs },
          (err: ServiceError | null, response: RateLimitResponse) => {
            if (err !== null) resolve({ kind: 'error', code: err.code, message: err.details });
            else resolve({ kind: 'response', response });
          },
        );
      });
    },
    close: () => client.close(),
  };
}

/** Sends `body` (a string, sent as is) to `<baseUrl><path>` and captures the answer. */
export async function httpCall(baseUrl: string, path: string, body?: string, method = 'POST'): Promise<HttpOutcome> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    body,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    signal: AbortSignal.timeout(5000),
  });
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  let json: unknown;
  if (contentType.startsWith('application/json')) json = JSON.parse(text);
  return { status: res.status, contentType, text, json };
}
