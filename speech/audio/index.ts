// Public surface of the audio layer: format resolution and streaming encoders.
export { createAudioEncoder, EncoderError, type AudioEncoder, type EncoderOptions } from './encoder.js';
export { createEncoderPool, type EncoderPool, type EncoderPoolOptions } from './encoder-pool.js';
export {
  FormatError,
  listOutputFormats,
  resolveOutputFormat,
  type OutputFormat,
  type SynthesisRoute,
} from './formats.js';
export { createResampler, type Resampler } from './resampler.js';
