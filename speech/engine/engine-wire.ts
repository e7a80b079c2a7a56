// Conversions between engine values and the chorus.speech.v1 wire messages, errors included (pure, both ends).
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import type { SynthesizeEvent, SynthesizeRequest } from '../../proto/gen/chorus/speech/v1/engine.js';
import { EngineError, type EngineEvent, type SynthesisInput } from './engine.js';
import { SsmlError } from './ssml.js';

/** Trailing metadata keys that carry our typed error across gRPC. */
export const ERROR_CODE_KEY = 'chorus-error-code';
export const ERROR_POSITION_KEY = 'chorus-error-position';

export function requestToWire(input: SynthesisInput): SynthesizeRequest {
  return {
    text: input.text,
    language: input.language,
    modelId: input.modelId,
    sampleRate: input.sampleRate ?? 0,
    voice: {
      espeakVoice: input.voice.espeakVoice,
      ratePercent: input.voice.ratePercent ?? 0,
      pitchPercent: input.voice.pitchPercent ?? 0,
      pitchRangePercent: input.voice.pitchRangePercent ?? 0,
    },
  };
}

/** The engine input for a wire request; 0 percentages and a 0 sample rate mean unset. Throws EngineError `internal` without a voice. */
export function requestFromWire(request: SynthesizeRequest, signal: AbortSignal): SynthesisInput {
  const voice = request.voice;
  if (voice === undefined || voice.espeakVoice === '') throw new EngineError('internal', 'request without a voice');
  const percent = (v: number): number | undefined => (v > 0 ? v : undefined);
  const rate = percent(voice.ratePercent);
  const pitch = percent(voice.pitchPercent);
  const range = percent(voice.pitchRangePercent);
  return {
    text: request.text,
    language: request.language,
    modelId: request.modelId,
    ...(request.sampleRate > 0 ? { sampleRate: request.sampleRate } : {}),
    signal,
    voice: {
      espeakVoice: voice.espeakVoice,
      ...(rate === undefined ? {} : { ratePercent: rate }),
      ...(pitch === undefined ? {} : { pitchPercent: pitch }),
      ...(range === undefined ? {} : { pitchRangePercent: range }),
    },
  };
}

export function eventToWire(event: EngineEvent): SynthesizeEvent {
  switch (event.type) {
    case 'audio':
      return {
        audio: {
          pcm: Buffer.from(event.pcm.buffer, event.pcm.byteOffset, event.pcm.byteLength),
          sampleRate: event.sampleRate,
        },
      };
    case 'marks':
      return {
        marks: {
          marks: event.marks.map((m) => ({
            value: m.value,
            start: m.start,
            end: m.end,
            startTime: m.start_time,
            endTime: m.end_time,
          })),
        },
      };
    case 'sentence':
      return {
        sentence: { start: event.start, end: event.end, startTime: event.start_time, endTime: event.end_time },
      };
  }
}

/** The engine event of a wire event, or undefined for an empty (unknown) one, which clients skip. */
export function eventFromWire(event: SynthesizeEvent): EngineEvent | undefined {
  if (event.audio !== undefined) {
    const bytes = event.audio.pcm;
    // Copy into an aligned buffer: the decoded bytes may sit at an odd offset.
    const pcm = new Int16Array(bytes.length >> 1);
    Buffer.from(pcm.buffer).set(bytes.subarray(0, pcm.length * 2));
    return { type: 'audio', pcm, sampleRate: event.audio.sampleRate };
  }
  if (event.marks !== undefined) {
    return {
      type: 'marks',
      marks: event.marks.marks.map((m) => ({
        type: 'word',
        value: m.value,
        start: m.start,
        end: m.end,
        start_time: m.startTime,
        end_time: m.endTime,
      })),
    };
  }
  if (event.sentence !== undefined) {
    const s = event.sentence;
    return { type: 'sentence', start: s.start, end: s.end, start_time: s.startTime, end_time: s.endTime };
  }
  return undefined;
}

export interface WireError {
  readonly code: status;
  readonly details: string;
  readonly metadata: Metadata;
}

/** The gRPC status for an error thrown by the engine. */
export function errorToWire(err: unknown): WireError {
  const metadata = new Metadata();
  if (err instanceof SsmlError) {
    metadata.set(ERROR_CODE_KEY, err.code);
    metadata.set(ERROR_POSITION_KEY, String(err.position));
    return { code: status.INVALID_ARGUMENT, details: err.message, metadata };
  }
  if (err instanceof EngineError) {
    metadata.set(ERROR_CODE_KEY, err.code);
    const code: Record<EngineError['code'], status> = {
      aborted: status.CANCELLED,
      overloaded: status.RESOURCE_EXHAUSTED,
      unavailable: status.UNAVAILABLE,
      internal: status.INTERNAL,
    };
    return { code: code[err.code], details: err.message, metadata };
  }
  metadata.set(ERROR_CODE_KEY, 'internal');
  return { code: status.INTERNAL, details: String(err), metadata };
}

const SSML_SUFFIX = / \(at character \d+\)$/;

/** The typed error for a failed call: SsmlError or EngineError. */
export function errorFromWire(err: ServiceError): SsmlError | EngineError {
  const code = err.metadata?.get(ERROR_CODE_KEY)[0]?.toString();
  const details = err.details ?? err.message;
  if (code === 'ssml_invalid') {
    const position = Number(err.metadata.get(ERROR_POSITION_KEY)[0]?.toString() ?? '0');
    return new SsmlError(details.replace(SSML_SUFFIX, ''), Number.isFinite(position) ? position : 0);
  }
  if (code === 'aborted' || code === 'overloaded' || code === 'unavailable' || code === 'internal') {
    return new EngineError(code, details);
  }
  switch (err.code) {
    case status.CANCELLED:
      return new EngineError('aborted', details);
    case status.RESOURCE_EXHAUSTED:
      return new EngineError('overloaded', details);
    case status.UNAVAILABLE:
    case status.DEADLINE_EXCEEDED:
    case status.FAILED_PRECONDITION:
      return new EngineError('unavailable', details, { cause: err });
    default:
      return new EngineError('internal', details, { cause: err });
  }
}
