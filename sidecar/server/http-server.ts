// The HTTP listener: /json (proto3 JSON in and out, spec §2.14) and /healthcheck; every other path is 404.
import http from 'node:http';
import { RateLimitResponse_Code } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import type { Health } from '../health.js';
import type { Logger } from '../logger.js';
import type { DecisionService } from './decision-service.js';
import { listen, pathOf, readBody, sendPlainError, stopServer } from './http-util.js';
import { decodeJsonRequest } from './json-request.js';
import { encodeJsonResponse } from './json-response.js';

export interface HttpServerOptions {
  readonly service: DecisionService;
  readonly health: Health;
  readonly logger: Logger;
}

export interface RunningHttpServer {
  readonly port: number;
  stop(graceMs: number): Promise<void>;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function handleJson(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  options: HttpServerOptions,
): Promise<void> {
  let body: string;
  try {
    body = await readBody(req);
  } catch (err) {
    options.logger.warn(`error: ${errorMessage(err)}`);
    sendPlainError(res, 400, 'Bad Request');
    return;
  }
  let request;
  try {
    request = decodeJsonRequest(body);
  } catch (err) {
    options.logger.warn(`error: ${errorMessage(err)}`);
    sendPlainError(res, 400, 'Bad Request');
    return;
  }
  let response;
  try {
    response = await options.service.shouldRateLimit(request, req.headers);
  } catch (err) {
    options.logger.warn(`error: ${errorMessage(err)}`);
    sendPlainError(res, 400, 'Bad Request');
    return;
  }
  let text: string;
  try {
    text = encodeJsonResponse(response);
  } catch (err) {
    options.logger.error(`error marshaling proto3 to json: ${errorMessage(err)}`);
    sendPlainError(res, 500, 'Internal Server Error');
    return;
  }
  let status = 200;
  if (response.overallCode === RateLimitResponse_Code.OVER_LIMIT) status = 429;
  else if (response.overallCode !== RateLimitResponse_Code.OK) status = 500;
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(text);
}

function handleHealthcheck(res: http.ServerResponse, health: Health): void {
  if (health.isHealthy()) {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('OK');
  } else {
    res.writeHead(500);
    res.end();
  }
}

/** Binds the HTTP server; methods are not restricted (as upstream's router). */
export async function startHttpServer(
  host: string,
  port: number,
  options: HttpServerOptions,
): Promise<RunningHttpServer> {
  const server = http.createServer((req, res) => {
    switch (pathOf(req)) {
      case '/json':
        handleJson(req, res, options).catch((err: unknown) => {
          options.logger.error(`json handler failed: ${errorMessage(err)}`);
          if (!res.headersSent) sendPlainError(res, 500, 'Internal Server Error');
          else res.destroy();
        });
        return;
      case '/healthcheck':
        req.resume();
        handleHealthcheck(res, options.health);
        return;
      default:
        req.resume();
        sendPlainError(res, 404, '404 page not found');
    }
  });
  const bound = await listen(server, host, port, 'HTTP');
  return { port: bound, stop: (graceMs) => stopServer(server, graceMs) };
}
