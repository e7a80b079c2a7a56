// The tracing folder's public surface: the Tracing factory and the carrier type the servers pass along.
export {
  createTracePropagator,
  createTracing,
  type Tracing,
  type TracingDeps,
  type TracingOptions,
} from './tracing.js';
export { isMetadataCarrier, type HeaderCarrier, type MetadataCarrier, type TraceCarrier } from './trace-carrier.js';
export { requestText } from './request-text.js';
