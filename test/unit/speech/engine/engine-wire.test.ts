import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { expect } from 'chai';
import { EngineError, type EngineEvent } from '../../../../speech/engine/engine.js';
import {
  errorFromWire,
  errorToWire,
  eventFromWire,
  eventToWire,
  requestFromWire,
  requestToWire,
} from '../../../../speech/engine/engine-wire.js';
import { SsmlError } from '../../../../speech/engine/ssml.js';

function serviceError(code: status, details: string, metadata = new Metadata()): ServiceError {
  return Object.assign(new Error(details), { code, details, metadata });
}

describe('engine wire conversions', () => {
  it('round-trips requests, with unset percentages as 0', () => {
    const signal = new AbortController().signal;
    const wire = requestToWire({
      text: 'hi',
      language: 'de-DE',
      modelId: 'tts-3.0',
      voice: { espeakVoice: 'en-us+f3', ratePercent: 150 },
    });
    expect(wire.voice).to.deep.equal({
      espeakVoice: 'en-us+f3',
      ratePercent: 150,
      pitchPercent: 0,
      pitchRangePercent: 0,
    });
    const back = requestFromWire(wire, signal);
    expect(back.voice).to.deep.equal({ espeakVoice: 'en-us+f3', ratePercent: 150 });
    expect(back).to.include({ text: 'hi', language: 'de-DE', modelId: 'tts-3.0', signal });
    expect(() => requestFromWire({ ...wire, voice: undefined }, signal)).to.throw(EngineError);
    expect(wire.sampleRate).to.equal(0);
    expect(back).to.not.have.property('sampleRate');
  });

  it('carries the output sample rate', () => {
    const wire = requestToWire({
      text: 'hi',
      language: 'en-US',
      modelId: 'tts-3.0',
      voice: { espeakVoice: 'en-us' },
      sampleRate: 24000,
    });
    expect(wire.sampleRate).to.equal(24000);
    expect(requestFromWire(wire, new AbortController().signal).sampleRate).to.equal(24000);
  });

  it('round-trips every event type', () => {
    const events: EngineEvent[] = [
      { type: 'audio', pcm: Int16Array.from([1, -2, 32767, -32768]), sampleRate: 22050 },
      { type: 'marks', marks: [{ type: 'word', value: 'hé', start: 3, end: 5, start_time: 10, end_time: 20 }] },
      { type: 'sentence', start: 0, end: 9, start_time: 0, end_time: 900 },
    ];
    for (const ev of events) {
      const back = eventFromWire(eventToWire(ev));
      if (ev.type === 'audio' && back?.type === 'audio') {
        expect(Array.from(back.pcm)).to.deep.equal(Array.from(ev.pcm));
        expect(back.sampleRate).to.equal(22050);
      } else expect(back).to.deep.equal(ev);
    }
    expect(eventFromWire({})).to.equal(undefined);
  });

  it('decodes PCM that sits at an odd byte offset', () => {
    const backing = Buffer.alloc(5);
    backing.writeInt16LE(-300, 1);
    backing.writeInt16LE(300, 3);
    const ev = eventFromWire({ audio: { pcm: backing.subarray(1), sampleRate: 22050 } });
    expect(ev?.type === 'audio' ? Array.from(ev.pcm) : []).to.deep.equal([-300, 300]);
  });

  it('carries typed errors through gRPC status and metadata', () => {
    const ssml = errorToWire(new SsmlError('unsupported element <x>', 12));
    expect(ssml.code).to.equal(status.INVALID_ARGUMENT);
    const back = errorFromWire(serviceError(ssml.code, ssml.details, ssml.metadata));
    expect(back).to.be.instanceOf(SsmlError);
    expect((back as SsmlError).position).to.equal(12);
    expect(back.message).to.equal('unsupported element <x> (at character 12)');
    for (const code of ['aborted', 'overloaded', 'unavailable', 'internal'] as const) {
      const wire = errorToWire(new EngineError(code, 'x'));
      const err = errorFromWire(serviceError(wire.code, wire.details, wire.metadata));
      expect((err as EngineError).code).to.equal(code);
    }
    expect(errorToWire(new Error('boom')).code).to.equal(status.INTERNAL);
  });

  it('maps plain gRPC statuses from other servers', () => {
    const code = (s: status): string => (errorFromWire(serviceError(s, 'x')) as EngineError).code;
    expect(code(status.UNAVAILABLE)).to.equal('unavailable');
    expect(code(status.DEADLINE_EXCEEDED)).to.equal('unavailable');
    expect(code(status.FAILED_PRECONDITION)).to.equal('unavailable');
    expect(code(status.RESOURCE_EXHAUSTED)).to.equal('overloaded');
    expect(code(status.CANCELLED)).to.equal('aborted');
    expect(code(status.UNKNOWN)).to.equal('internal');
  });
});
