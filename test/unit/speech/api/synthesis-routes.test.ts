// The three synthesis routes with a fake engine: fields, limits, model/language rules, errors, SSE framing.
import { expect } from 'chai';
import { EngineError } from '../../../../speech/engine/engine.js';
import { createFakeEngine, FAKE_WORD_MS } from './fake-engine.js';
import { parseEventStream } from './sse-parser.js';
import { errorOf, postJson, startTestGateway, type TestGateway } from './test-gateway.js';

describe('speech API: synthesis routes (fake engine)', function () {
  this.timeout(30_000);
  const engine = createFakeEngine();
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway({ engine, sseKeepaliveMs: 40 });
  });
  after(async () => {
    await t?.close();
  });
  afterEach(() => engine.configure({}));

  const speech = (body: unknown, headers?: Record<string, string>) =>
    postJson(`${t.url}/v1/audio/speech`, t.ownerKey, body, headers);
  const stream = (body: unknown, headers?: Record<string, string>) =>
    postJson(`${t.url}/v1/audio/stream`, t.ownerKey, body, headers);
  const sse = (body: unknown, headers?: Record<string, string>) =>
    postJson(`${t.url}/v1/audio/stream/with-timestamps`, t.ownerKey, body, headers);

  it('answers /speech with audio, format, billing and a mark tree', async () => {
    const res = await speech({ input: 'Hello world. Second one.', voice_id: 'henry', audio_format: 'pcm' });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-request-id')).to.be.a('string').and.not.equal('');
    expect(res.headers.get('tts-version')).to.equal('2026-09-13');
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).to.deep.equal([
      'audio_data',
      'audio_format',
      'billable_characters_count',
      'speech_marks',
    ]);
    expect(body.audio_format).to.equal('pcm');
    expect(body.billable_characters_count).to.equal(24);
    // 4 words of 200 ms at 24 kHz, 16-bit mono.
    expect(Buffer.from(body.audio_data as string, 'base64').length).to.be.closeTo(4 * 0.2 * 24000 * 2, 64);
    const tree = body.speech_marks as { type: string; chunks: { type: string; chunks: { value: string }[] }[] };
    expect(tree.type).to.equal('paragraph');
    expect(tree.chunks.map((c) => c.type)).to.deep.equal(['sentence', 'sentence']);
    expect(tree.chunks.flatMap((c) => c.chunks.map((w) => w.value))).to.deep.equal(['Hello', 'world', 'Second', 'one']);
    const input = engine.inputs[engine.inputs.length - 1];
    expect(input?.modelId).to.equal('tts-3.0');
    expect(input?.language).to.equal('en-US');
    expect(input?.voice.espeakVoice).to.equal('en-us+m3');
  });

  it('counts billable characters without SSML tags', async () => {
    const res = await speech({ input: '<speak>Hi <break time="1s"/>there</speak>', voice_id: 'henry' });
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { billable_characters_count: number }).billable_characters_count).to.equal(8);
  });

  it('echoes X-Request-ID and rejects a malformed Tts-Version', async () => {
    const ok = await speech(
      { input: 'x', voice_id: 'henry' },
      { 'x-request-id': 'abc-123', 'tts-version': '2025-01-01' },
    );
    expect(ok.headers.get('x-request-id')).to.equal('abc-123');
    expect(ok.headers.get('tts-version')).to.equal('2025-01-01');
    for (const bad of ['2026-13-01', 'yesterday', '2026-02-30']) {
      const res = await speech({ input: 'x', voice_id: 'henry' }, { 'tts-version': bad, 'x-request-id': 'r1' });
      const { status, body } = await errorOf(res);
      expect(status, bad).to.equal(400);
      expect(body.error.code).to.equal('validation_failed');
      expect(body.error.request_id).to.equal('r1');
      expect(res.headers.get('tts-version')).to.equal('2026-09-13');
    }
  });

  it('rejects unknown fields, wrong types and missing fields with field paths', async () => {
    let { status, body } = await errorOf(await speech({ input: 'hi', voice_id: 'henry', speed: 2 }));
    expect(status).to.equal(400);
    expect(body.error.code).to.equal('validation_failed');
    expect(body.error.fields).to.deep.equal({ speed: 'unknown field' });
    const expectFields = async (request: unknown, fields: Record<string, string>) => {
      const result = await errorOf(await speech(request));
      expect([result.status, result.body.error.code]).to.deep.equal([400, 'validation_failed']);
      expect(result.body.error.fields).to.deep.equal(fields);
    };
    await expectFields(
      { input: 'hi', voice_id: 'henry', options: { loud: true } },
      { 'options.loud': 'unknown field' },
    );
    await expectFields({ input: 5 }, { input: 'must be a string', voice_id: 'is required' });
    await expectFields(
      { input: 'hi', voice_id: 'henry', options: { text_normalization: 'yes' } },
      { 'options.text_normalization': 'must be true or false' },
    );
    ({ status, body } = await errorOf(await speech('{"input": ')));
    expect([status, body.error.code]).to.deep.equal([400, 'validation_failed']);
    ({ status, body } = await errorOf(await speech(['a'])));
    expect([status, body.error.code]).to.deep.equal([400, 'validation_failed']);
    const res = await fetch(`${t.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.ownerKey}`, 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect((await errorOf(res)).body.error.code).to.equal('unsupported_media_type');
    expect(res.status).to.equal(415);
  });

  it('limits input to 2,000 code points on /speech and 20,000 on the streams', async () => {
    const emoji = '😀'.repeat(2000); // 2,000 code points, 4,000 UTF-16 units
    expect((await speech({ input: emoji, voice_id: 'henry', audio_format: 'pcm' })).status).to.equal(200);
    let { status, body } = await errorOf(await speech({ input: `${emoji}a`, voice_id: 'henry' }));
    expect(status).to.equal(400);
    expect(body.error.fields?.input).to.contain('2001');
    ({ status, body } = await errorOf(await stream({ input: 'a '.repeat(10_000) + 'b', voice_id: 'henry' })));
    expect(status).to.equal(400);
    expect(body.error.fields?.input).to.contain('20001');
    expect((await sse({ input: 'a'.repeat(20_001), voice_id: 'henry' })).status).to.equal(400);
  });

  it('reports malformed SSML with its position', async () => {
    const { status, body } = await errorOf(
      await speech({ input: '<speak>Hello <prosody rate="fast">world</speak>', voice_id: 'henry' }),
    );
    expect(status).to.equal(400);
    expect(body.error.code).to.equal('validation_failed');
    expect(body.error.fields?.input).to.match(/at character \d+/);
  });

  it('applies model and language rules', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ voice_id: 'nobody' }, 404, 'not_found'],
      [{ voice_id: 'henry', model: 'tts-9' }, 400, 'validation_failed'],
      [{ voice_id: 'lena', model: 'tts-3.2' }, 400, 'unsupported_language'],
      [{ voice_id: 'henry', model: 'tts-3.2', language: 'de-DE' }, 400, 'unsupported_language'],
      [{ voice_id: 'henry', language: 'ja-JP' }, 400, 'unsupported_language'],
      [{ voice_id: 'henry', language: 'english' }, 400, 'validation_failed'],
      [{ voice_id: 'lena', model: 'tts-english' }, 400, 'unsupported_language'],
      [{ voice_id: 'henry', model: 'tts-dialogue-1' }, 400, 'unsupported_model'],
      [{ voice_id: 'henry', output_format: 'mp3_8000_1' }, 400, 'validation_failed'],
      [{ voice_id: 'henry', audio_format: 'wma' }, 400, 'validation_failed'],
    ];
    for (const [fields, status, code] of cases) {
      const res = await errorOf(await speech({ input: 'Hallo Welt', ...fields }));
      expect([res.status, res.body.error.code], JSON.stringify(fields)).to.deep.equal([status, code]);
    }
    const de = await speech({ input: 'Hallo Welt', voice_id: 'lena', audio_format: 'pcm' });
    expect(de.status).to.equal(200);
    expect(engine.inputs[engine.inputs.length - 1]?.language).to.equal('de-DE');
    const routed = await speech({ input: 'Hola', voice_id: 'henry', language: 'es-mx', audio_format: 'pcm' });
    expect(routed.status).to.equal(200);
    expect(engine.inputs[engine.inputs.length - 1]?.language).to.equal('es-MX');
    for (const model of ['tts-english', 'tts-multilingual']) {
      const { status, body } = await errorOf(await sse({ input: 'hi', voice_id: 'henry', model }));
      expect([status, body.error.code]).to.deep.equal([400, 'speech_marks_unsupported']);
      expect((await stream({ input: 'hi', voice_id: 'henry', model, output_format: 'pcm_16000' })).status).to.equal(
        200,
      );
    }
  });

  it('streams raw audio with the Content-Type rules', async () => {
    let res = await stream({ input: 'one two three', voice_id: 'henry' }, { accept: 'audio/pcm' });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('audio/L16; rate=24000; channels=1');
    expect(res.headers.get('transfer-encoding')).to.equal('chunked');
    expect((await res.arrayBuffer()).byteLength).to.be.closeTo(3 * 0.2 * 24000 * 2, 64);
    res = await stream({ input: 'one', voice_id: 'henry', output_format: 'ulaw_8000' }, { accept: 'audio/mpeg' });
    expect(res.headers.get('content-type')).to.equal('audio/basic');
    expect((await res.arrayBuffer()).byteLength).to.be.closeTo(0.2 * 8000, 8);
    const { status, body } = await errorOf(await stream({ input: 'one', voice_id: 'henry' }, { accept: 'video/mp4' }));
    expect([status, body.error.code]).to.deep.equal([415, 'unsupported_media_type']);
    const wav = await errorOf(await stream({ input: 'one', voice_id: 'henry', audio_format: 'wav' }));
    expect([wav.status, wav.body.error.code]).to.deep.equal([400, 'validation_failed']);
  });

  it('sends SSE chunks, marks for every word and a done event', async () => {
    const input = 'The cat sat on the mat. It was happy!';
    const res = await sse({ input, voice_id: 'olivia' });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    expect(res.headers.get('tts-audio-content-type')).to.equal('audio/L16; rate=24000; channels=1');
    const { events } = parseEventStream(await res.text());
    const last = events[events.length - 1];
    expect(last?.event).to.equal('speech.done');
    expect(JSON.parse(last?.data ?? '{}')).to.deep.equal({ audio_duration_ms: 9 * FAKE_WORD_MS });
    const chunks = events
      .filter((e) => e.event === 'speech.chunk')
      .map((e) => JSON.parse(e.data) as Record<string, unknown>);
    expect(chunks.some((c) => typeof c.audio === 'string')).to.equal(true);
    const marks = chunks.flatMap((c) => (c.speech_marks as { value: string; start: number }[] | undefined) ?? []);
    expect(marks.map((m) => m.value)).to.deep.equal(['The', 'cat', 'sat', 'on', 'the', 'mat', 'It', 'was', 'happy']);
    expect(events.some((e) => e.data.includes('[DONE]'))).to.equal(false);
  });

  it('answers a busy engine with 503 before any byte, and cuts a stream that fails midway', async () => {
    engine.configure({ failAtStart: new EngineError('overloaded', 'full') });
    const busy = await errorOf(await stream({ input: 'a b', voice_id: 'henry' }));
    expect([busy.status, busy.body.error.code]).to.deep.equal([503, 'engine_unavailable']);
    const busySse = await sse({ input: 'a b', voice_id: 'henry' });
    expect(busySse.headers.get('retry-after')).to.equal('1');
    const busySseBody = await errorOf(busySse);
    expect([busySseBody.status, busySseBody.body.error.code]).to.deep.equal([503, 'engine_unavailable']);
    engine.configure({ failAfterFirstChunk: new EngineError('internal', 'worker crashed') });
    const res = await stream({ input: 'one two three four', voice_id: 'henry', output_format: 'pcm_24000' });
    expect(res.status).to.equal(200);
    let failed = false;
    try {
      await res.arrayBuffer();
    } catch {
      failed = true;
    }
    expect(failed, 'the body must end abnormally').to.equal(true);
    const events = parseEventStream(await (await sse({ input: 'one two', voice_id: 'henry' })).text()).events;
    const error = events[events.length - 1];
    expect(error?.event).to.equal('speech.error');
    expect(JSON.parse(error?.data ?? '{}')).to.deep.equal({ error: { code: 'internal', message: 'synthesis failed' } });
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metrics).to.match(/chorus_speech_stream_failures_total\{route="stream",code="internal"\} 1/);
    expect(metrics).to.match(/chorus_speech_stream_failures_total\{route="stream-with-timestamps",code="internal"\} 1/);
  });

  it('sends : keepalive comments while the engine is idle', async () => {
    engine.configure({ delayPerWordMs: 200 });
    const parsed = parseEventStream(await (await sse({ input: 'slow words', voice_id: 'henry' })).text());
    expect(parsed.comments).to.include(' keepalive');
    expect(parsed.events[parsed.events.length - 1]?.event).to.equal('speech.done');
  });

  it('stops the engine when the client goes away mid-stream', async () => {
    engine.configure({ delayPerWordMs: 50 });
    for (const path of ['/v1/audio/stream', '/v1/audio/stream/with-timestamps']) {
      const controller = new AbortController();
      const res = await fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.ownerKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'word '.repeat(400), voice_id: 'henry', output_format: 'pcm_24000' }),
        signal: controller.signal,
      });
      const reader = res.body?.getReader();
      await reader?.read();
      controller.abort();
      const input = engine.inputs[engine.inputs.length - 1];
      for (let i = 0; i < 200 && input?.signal?.aborted !== true; i += 1) await new Promise((r) => setTimeout(r, 25));
      expect(input?.signal?.aborted, path).to.equal(true);
    }
    const aborted = /chorus_speech_syntheses_total\{model="tts-3.0",route="stream",outcome="aborted"\} 1/;
    let metrics = '';
    for (let i = 0; i < 200 && !aborted.test(metrics); i += 1) {
      metrics = await (await fetch(`${t.url}/metrics`)).text();
      if (!aborted.test(metrics)) await new Promise((r) => setTimeout(r, 25));
    }
    expect(metrics).to.match(aborted);
  });
});
