// The express application of the gateway: middleware order, every route, and the final error handling.
import express, { type Express, type RequestHandler } from 'express';
import { OPERATION_REQUIREMENTS, type Requirement } from '../auth/index.js';
import type { ApiDeps } from './api-deps.js';
import { authenticate, authorize } from './auth-middleware.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { healthRoute, metricsRoute, readyRoute } from './health-routes.js';
import { jsonBody } from './json-body.js';
import { listModelsRoute } from './model-routes.js';
import { buildOpenApiDocument } from './openapi.js';
import { requestContext } from './request-context.js';
import { speechRoute } from './speech-route.js';
import { streamTimestampsRoute } from './stream-timestamps-route.js';
import { streamRoute } from './stream-route.js';
import { deleteVoiceRoute, getVoiceRoute, listVoicesRoute, voiceSampleRoute } from './voice-routes.js';

const AUDIO = OPERATION_REQUIREMENTS.synthesize;
const VOICES_READ = OPERATION_REQUIREMENTS['voices.read'];
const VOICES_DELETE = OPERATION_REQUIREMENTS['voices.delete'];

export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestContext());
  app.use(deps.metrics.observe());

  const openapi = buildOpenApiDocument();
  app.get('/healthz', healthRoute());
  app.get('/readyz', readyRoute(deps));
  app.get('/metrics', metricsRoute(deps));
  app.get('/v1/openapi.json', (_req, res) => {
    res.json(openapi);
  });

  const authed = authenticate(deps.authenticator);
  const guard = (requirement: Requirement | null, ...handlers: RequestHandler[]): RequestHandler[] =>
    requirement === null ? [authed, ...handlers] : [authed, authorize(requirement), ...handlers];
  const body = jsonBody();

  app.post('/v1/audio/speech', ...guard(AUDIO, body, speechRoute(deps)));
  app.post('/v1/audio/stream', ...guard(AUDIO, body, streamRoute(deps)));
  app.post('/v1/audio/stream/with-timestamps', ...guard(AUDIO, body, streamTimestampsRoute(deps)));
  app.get('/v1/audio/models', ...guard(null, listModelsRoute(deps)));
  app.get('/v1/voices', ...guard(VOICES_READ, listVoicesRoute(deps)));
  app.get('/v1/voices/:id', ...guard(VOICES_READ, getVoiceRoute(deps)));
  app.delete('/v1/voices/:id', ...guard(VOICES_DELETE, deleteVoiceRoute(deps)));
  app.get('/v1/voices/:id/sample', ...guard(VOICES_READ, voiceSampleRoute(deps)));

  app.use(notFoundHandler());
  app.use(errorHandler(deps.logger));
  return app;
}
