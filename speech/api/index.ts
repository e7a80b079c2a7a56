// Public surface of the REST layer for the composition root.
export { createApp } from './app.js';
export type { ApiDeps } from './api-deps.js';
export { createGatewayMetrics, type GatewayMetrics } from './gateway-metrics.js';
export type { EncoderFactory } from './synthesis-session.js';
export { buildOpenApiDocument } from './openapi.js';
export { SpeechError, httpStatusOf, type SpeechErrorCode } from './speech-error.js';
