import { expect } from 'chai';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { SpeechEngineClient } from '../../../../proto/gen/chorus/speech/v1/engine.js';
import { HealthCheckResponse_ServingStatus, HealthClient } from '../../../../proto/gen/grpc/health/v1/health.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import {
  EngineError,
  type EngineEvent,
  type SpeechEngine,
  type SynthesisInput,
} from '../../../../speech/engine/engine.js';
import { createEspeakEngine } from '../../../../speech/engine/espeak-engine.js';
import { createRemoteEngine } from '../../../../speech/engine/remote-engine.js';
import { SsmlError } from '../../../../speech/engine/ssml.js';
import { freePort } from '../../../support/ports.js';
import { startProcess, type RunningProcess } from '../../../support/process.js';
import { SAMPLE_TEXT } from './sample-text.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

function input(text: string, extra: Partial<SynthesisInput> = {}): SynthesisInput {
  return {
    text,
    language: 'en-US',
    voice: { espeakVoice: 'en-us+f2', ratePercent: 110 },
    modelId: 'tts-3.0',
    ...extra,
  };
}

interface Collected {
  readonly pcm: Buffer;
  readonly marks: unknown[];
  readonly sentences: unknown[];
  readonly sampleRates: number[];
}

async function collect(events: AsyncIterable<EngineEvent>): Promise<Collected> {
  const pcm: Buffer[] = [];
  const marks: unknown[] = [];
  const sentences: unknown[] = [];
  const sampleRates = new Set<number>();
  for await (const ev of events) {
    if (ev.type === 'audio') {
      pcm.push(Buffer.from(ev.pcm.buffer, ev.pcm.byteOffset, ev.pcm.byteLength));
      sampleRates.add(ev.sampleRate);
    } else if (ev.type === 'marks') marks.push(...ev.marks);
    else sentences.push(ev);
  }
  return { pcm: Buffer.concat(pcm), marks, sentences, sampleRates: [...sampleRates] };
}

async function failure(events: AsyncIterable<EngineEvent>): Promise<unknown> {
  try {
    await collect(events);
  } catch (err) {
    return err;
  }
  throw new Error('expected the synthesis to fail');
}

describe('engine server (chorus-speech-engine over gRPC)', function () {
  this.timeout(90000);
  let server: RunningProcess;
  let address = '';
  let remote: SpeechEngine;
  let local: SpeechEngine;

  before(async () => {
    const port = await freePort();
    address = `127.0.0.1:${port}`;
    server = startProcess(process.execPath, ['--import', 'tsx', 'speech/engine-server-main.ts'], {
      cwd: repoRoot,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ENGINE_WORKERS: '1', MODEL_ID: 'tts-3.0,tts-3.2' },
    });
    remote = createRemoteEngine({ url: `127.0.0.1:${port}`, logger: silentLogger, readyTimeoutMs: 60000 });
    local = createEspeakEngine({ workers: 1, logger: silentLogger });
    try {
      await Promise.all([remote.ready(), local.ready()]);
    } catch (err) {
      throw new Error(`engine server did not become ready: ${String(err)}\n${server.output()}`, { cause: err });
    }
  });

  after(async () => {
    await remote?.close();
    await local?.close();
    await server?.stop();
  });

  for (const [name, text] of [
    ['plain text', SAMPLE_TEXT],
    [
      'SSML',
      '<speak>Hello <prosody rate="slow" pitch="+20%">there</prosody>, <break time="300ms"/>of the best.</speak>',
    ],
  ] as const) {
    it(`gives the same audio bytes and marks in process and through the server (${name})`, async () => {
      const a = await collect(local.synthesize(input(text)));
      const b = await collect(remote.synthesize(input(text)));
      expect(a.pcm.length).to.be.greaterThan(10000);
      expect(b.sampleRates).to.deep.equal([22050]);
      expect(b.pcm.equals(a.pcm)).to.equal(true);
      expect(b.marks).to.deep.equal(a.marks);
      expect(b.sentences).to.deep.equal(a.sentences);
    });
  }

  it('resamples on the server when the request names an output rate', async () => {
    const text = 'The server resamples, the gateway only encodes.';
    const a = await collect(local.synthesize(input(text, { sampleRate: 24000 })));
    const b = await collect(remote.synthesize(input(text, { sampleRate: 24000 })));
    const native = await collect(local.synthesize(input(text)));
    expect(b.sampleRates).to.deep.equal([24000]);
    expect(b.pcm.equals(a.pcm)).to.equal(true);
    expect(b.marks).to.deep.equal(native.marks);
    expect(b.sentences).to.deep.equal(native.sentences);
  });

  it('respects flow control with a slow reader and still delivers every byte', async () => {
    const text = SAMPLE_TEXT.repeat(2);
    const expected = await collect(local.synthesize(input(text)));
    const pcm: Buffer[] = [];
    let seen = 0;
    for await (const ev of remote.synthesize(input(text))) {
      // Pausing early lets the server's HTTP/2 window fill, so it has to wait for 'drain'.
      if (seen++ === 0) await new Promise((resolve) => setTimeout(resolve, 300));
      if (ev.type === 'audio') pcm.push(Buffer.from(ev.pcm.buffer, ev.pcm.byteOffset, ev.pcm.byteLength));
    }
    expect(Buffer.concat(pcm).equals(expected.pcm)).to.equal(true);
  });

  it('answers grpc.health.v1 and lists the served models', async () => {
    const health = new HealthClient(address, grpc.credentials.createInsecure());
    const client = new SpeechEngineClient(address, grpc.credentials.createInsecure());
    try {
      const check = (service: string): Promise<{ status?: number; code?: number }> =>
        new Promise((resolve) => {
          health.check({ service }, (err, res) => resolve(err === null ? { status: res.status } : { code: err.code }));
        });
      expect(await check('')).to.deep.equal({ status: HealthCheckResponse_ServingStatus.SERVING });
      expect(await check('chorus.speech.v1.SpeechEngine')).to.deep.equal({
        status: HealthCheckResponse_ServingStatus.SERVING,
      });
      expect(await check('other.Service')).to.deep.equal({ code: grpc.status.NOT_FOUND });
      const models = await new Promise<string[]>((resolve, reject) => {
        client.models({}, (err, res) => (err === null ? resolve(res.modelIds) : reject(err)));
      });
      expect(models).to.deep.equal(['tts-3.0', 'tts-3.2']);
    } finally {
      health.close();
      client.close();
    }
  });

  it('carries SsmlError with its position across the wire', async () => {
    const err = await failure(remote.synthesize(input('<speak>Hi <bogus/></speak>')));
    expect(err).to.be.instanceOf(SsmlError);
    expect((err as SsmlError).position).to.equal(10);
    expect((err as SsmlError).message).to.match(/unsupported element <bogus>/);
  });

  it('refuses a model the server does not serve', async () => {
    const err = await failure(remote.synthesize(input('Hello', { modelId: 'tts-english' })));
    expect(err).to.be.instanceOf(EngineError);
    expect((err as EngineError).code).to.equal('unavailable');
  });

  it('cancels on abort and when the consumer leaves early, and keeps serving', async () => {
    const controller = new AbortController();
    let chunks = 0;
    let error: unknown;
    try {
      for await (const ev of remote.synthesize(input(SAMPLE_TEXT, { signal: controller.signal }))) {
        if (ev.type === 'audio' && ++chunks === 3) controller.abort();
      }
    } catch (err) {
      error = err;
    }
    expect((error as EngineError).code).to.equal('aborted');
    for await (const ev of remote.synthesize(input(SAMPLE_TEXT))) {
      if (ev.type === 'audio') break;
    }
    const after = await collect(remote.synthesize(input('Still serving.')));
    expect(after.marks.length).to.equal(2);
  });

  it('reports an unreachable server as unavailable', async () => {
    const port = await freePort();
    const nowhere = createRemoteEngine({ url: `127.0.0.1:${port}`, logger: silentLogger, readyTimeoutMs: 500 });
    try {
      const ready = await nowhere.ready().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((ready as EngineError).code).to.equal('unavailable');
      const err = await failure(nowhere.synthesize(input('Hello')));
      expect((err as EngineError).code).to.equal('unavailable');
    } finally {
      await nowhere.close();
    }
  });

  it('exits cleanly on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });
});
