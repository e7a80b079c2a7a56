// The gRPC and HTTP servers against a test double of the decision service: status mapping and graceful stop.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import {
  RateLimitResponse_Code,
  RateLimitServiceClient,
  type RateLimitResponse,
} from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { BackendError } from '../../../../sidecar/errors.js';
import { createHealth } from '../../../../sidecar/health.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import type { DecisionService } from '../../../../sidecar/server/decision-service.js';
import { startGrpcServer } from '../../../../sidecar/server/grpc-server.js';
import { startHttpServer } from '../../../../sidecar/server/http-server.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';

function response(overallCode: RateLimitResponse_Code): RateLimitResponse {
  return {
    overallCode,
    statuses: [],
    responseHeadersToAdd: [],
    requestHeadersToAdd: [],
    rawBody: Buffer.alloc(0),
    dynamicMetadata: undefined,
    quota: undefined,
  };
}

/** Answers after `delayMs` with the code named by the request's domain, or throws for domain `fail`. */
function fakeService(delayMs: number): DecisionService {
  return {
    async shouldRateLimit(req) {
      await new Promise((r) => setTimeout(r, delayMs));
      if (req.domain === 'fail') throw new BackendError('connection refused');
      if (req.domain === 'unknown') return response(RateLimitResponse_Code.UNKNOWN);
      return response(RateLimitResponse_Code.OK);
    },
  };
}

describe('HTTP server with a test double', () => {
  it('gives 500 with the JSON body for an UNKNOWN overall code and 400 for a backend error', async () => {
    const http = await startHttpServer('127.0.0.1', 0, {
      service: fakeService(0),
      health: createHealth({ backendStartsHealthy: true, requireConfig: false }),
      logger: silentLogger,
    });
    try {
      const unknown = await fetch(`http://127.0.0.1:${http.port}/json`, {
        method: 'POST',
        body: '{"domain":"unknown"}',
      });
      expect(unknown.status).to.equal(500);
      expect(unknown.headers.get('content-type')).to.equal('application/json');
      expect(await unknown.text()).to.equal('{}');
      const failed = await fetch(`http://127.0.0.1:${http.port}/json`, { method: 'POST', body: '{"domain":"fail"}' });
      expect(failed.status).to.equal(400);
      expect(await failed.text()).to.equal('Bad Request\n');
    } finally {
      await http.stop(1000);
    }
  });

  it('lets an in-flight /json request finish on stop', async () => {
    const http = await startHttpServer('127.0.0.1', 0, {
      service: fakeService(300),
      health: createHealth({ backendStartsHealthy: true, requireConfig: false }),
      logger: silentLogger,
    });
    const inFlight = fetch(`http://127.0.0.1:${http.port}/json`, { method: 'POST', body: '{"domain":"d"}' });
    await new Promise((r) => setTimeout(r, 100));
    const stopped = http.stop(5000);
    const res = await inFlight;
    expect(res.status).to.equal(200);
    await stopped;
  });
});

describe('gRPC server with a test double', () => {
  it('maps a thrown error to UNKNOWN, counts requests and finishes in-flight calls on stop', async () => {
    const stats = new StatsStore();
    const server = await startGrpcServer('127.0.0.1:0', {
      service: fakeService(300),
      health: createHealth({ backendStartsHealthy: false, requireConfig: false }),
      stats,
      logger: silentLogger,
      maxConnectionAgeMs: 86_400_000,
      maxConnectionAgeGraceMs: 3_600_000,
    });
    const client = new RateLimitServiceClient(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const call = (domain: string): Promise<RateLimitResponse> =>
      new Promise((resolve, reject) =>
        client.shouldRateLimit({ domain, descriptors: [], hitsAddend: 0 }, (err, res) =>
          err !== null ? reject(err) : resolve(res),
        ),
      );
    try {
      const err = (await call('fail').catch((e: unknown) => e)) as grpc.ServiceError;
      expect(err.code).to.equal(grpc.status.UNKNOWN);
      expect(err.details).to.equal('connection refused');
      const inFlight = call('ok');
      await new Promise((r) => setTimeout(r, 100));
      const stopped = server.stop(5000);
      expect((await inFlight).overallCode).to.equal(RateLimitResponse_Code.OK);
      await stopped;
      expect(stats.counter('ratelimit_server.ShouldRateLimit.total_requests').value()).to.equal(2);
      expect(stats.timer('ratelimit_server.ShouldRateLimit.response_time').count()).to.equal(2);
    } finally {
      client.close();
      await server.stop(100);
    }
  });
});
