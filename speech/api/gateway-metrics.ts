// Prometheus metrics of the gateway on a registry of its own (no prom-client global), served at /metrics.
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export interface GatewayMetrics {
  readonly registry: Registry;
  /** Characters billed, by model and route. */
  readonly billableCharacters: Counter<'model' | 'route'>;
  /** Streams that failed after the response had started, by route and error code. */
  readonly streamFailures: Counter<'route' | 'code'>;
  /** Completed syntheses, by model, route and outcome (ok, error, aborted). */
  readonly syntheses: Counter<'model' | 'route' | 'outcome'>;
  /** Middleware counting every request and its duration by method, route template and status. */
  observe(): (req: Request, res: Response, next: NextFunction) => void;
}

export function createGatewayMetrics(options: { readonly defaultMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'chorus_speech_' });
  const requests = new Counter({
    name: 'chorus_speech_http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'chorus_speech_http_request_duration_seconds',
    help: 'Time until the response was complete, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const billableCharacters = new Counter({
    name: 'chorus_speech_billable_characters_total',
    help: 'Billable characters synthesised, by model and route',
    labelNames: ['model', 'route'] as const,
    registers: [registry],
  });
  const streamFailures = new Counter({
    name: 'chorus_speech_stream_failures_total',
    help: 'Streams that failed after the response had started',
    labelNames: ['route', 'code'] as const,
    registers: [registry],
  });
  const syntheses = new Counter({
    name: 'chorus_speech_syntheses_total',
    help: 'Syntheses by model, route and outcome',
    labelNames: ['model', 'route', 'outcome'] as const,
    registers: [registry],
  });
  return {
    registry,
    billableCharacters,
    streamFailures,
    syntheses,
    observe() {
      return (req, res, next) => {
        const started = process.hrtime.bigint();
        res.on('close', () => {
          // The template (e.g. /v1/voices/:id), never the raw path: ids would explode the label set.
          const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
          const template = typeof route === 'string' ? `${req.baseUrl}${route}` : 'unmatched';
          requests.inc({ method: req.method, route: template, status: String(res.statusCode) });
          duration.observe({ method: req.method, route: template }, Number(process.hrtime.bigint() - started) / 1e9);
        });
        next();
      };
    },
  };
}
