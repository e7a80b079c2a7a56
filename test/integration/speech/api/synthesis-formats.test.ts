// The gateway with the real espeak engine and encoders: every format decoded by ffprobe, marks, SSE, restart.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../../../sidecar/logger.js';
import { createEspeakEngine } from '../../../../speech/engine/espeak-engine.js';
import { listOutputFormats } from '../../../../speech/audio/formats.js';
import { parseSpeechInput } from '../../../../speech/engine/ssml.js';
import { startGateway } from '../../../../speech/gateway.js';
import { loadSpeechSettings } from '../../../../speech/settings.js';
import { createVoiceRepository } from '../../../../speech/store/index.js';
import { requireBinary } from '../../../support/process.js';
import { parseEventStream } from '../../../unit/speech/api/sse-parser.js';
import { postJson, startTestGateway, type TestGateway } from '../../../unit/speech/api/test-gateway.js';

interface Probe {
  readonly codec: string;
  readonly sampleRate: number;
  readonly channels: number;
  readonly durationMs: number;
}

interface Word {
  readonly type: string;
  readonly value: string;
  readonly start: number;
  readonly end: number;
  readonly start_time: number;
  readonly end_time: number;
}

interface MarkNode {
  readonly type: string;
  readonly end_time: number;
  readonly chunks: readonly (MarkNode | Word)[];
}

const TEXT =
  'The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with a single step, ' +
  'and the view from the top of the cliff is worth every minute of the climb.';

/** Raw streams carry no header: ffprobe is told what they are. */
const RAW: Readonly<Record<string, readonly string[]>> = {
  pcm: ['-f', 's16le'],
  ulaw: ['-f', 'mulaw'],
  alaw: ['-f', 'alaw'],
};

function probe(bytes: Buffer, raw?: { kind: 'pcm' | 'ulaw' | 'alaw'; rate: number }): Probe {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-probe-'));
  try {
    const file = path.join(dir, 'audio');
    writeFileSync(file, bytes);
    const input =
      raw === undefined ? [] : [...(RAW[raw.kind] ?? []), '-sample_rate', String(raw.rate), '-ch_layout', 'mono'];
    const out = execFileSync(
      'ffprobe',
      [
        '-v',
        'error',
        ...input,
        '-show_entries',
        'stream=codec_name,sample_rate,channels:format=duration',
        '-of',
        'json',
        file,
      ],
      { encoding: 'utf8' },
    );
    const json = JSON.parse(out) as {
      streams: { codec_name: string; sample_rate: string; channels: number }[];
      format: { duration?: string };
    };
    const stream = json.streams[0];
    if (stream === undefined) throw new Error('no audio stream');
    // Streamed containers (FLAC, ADTS) may carry no length; decoding and counting samples works for all.
    const decoded = execFileSync(
      'ffmpeg',
      ['-v', 'error', ...input, '-i', file, '-f', 's16le', '-ac', '1', '-ar', '8000', 'pipe:1'],
      {
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    return {
      codec: stream.codec_name,
      sampleRate: Number(stream.sample_rate),
      channels: stream.channels,
      durationMs: (decoded.length / 2 / 8000) * 1000,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function flattenWords(node: MarkNode): Word[] {
  return node.chunks.flatMap((c) => (c.type === 'word' ? [c as Word] : flattenWords(c as MarkNode)));
}

/** Every word of the input, in order, non-overlapping, inside the audio. */
function expectCompleteMarks(input: string, words: readonly Word[], audioMs: number): void {
  const expected = parseSpeechInput(input).words;
  expect(words.map((w) => [w.value, w.start, w.end])).to.deep.equal(expected.map((w) => [w.value, w.start, w.end]));
  for (let i = 0; i < words.length; i += 1) {
    const w = words[i] as Word;
    expect(w.end_time, w.value).to.be.at.least(w.start_time);
    if (i > 0) expect(w.start_time, w.value).to.be.at.least((words[i - 1] as Word).end_time);
    expect(w.end_time, w.value).to.be.at.most(audioMs + 1);
  }
}

function expectDuration(actualMs: number, marksEndMs: number, label: string): void {
  expect(
    Math.abs(actualMs - marksEndMs) / marksEndMs,
    `${label}: ${actualMs} ms audio vs ${marksEndMs} ms marks`,
  ).to.be.at.most(0.05);
}

describe('speech gateway with the real engine: formats, marks, SSE', function () {
  this.timeout(180_000);
  let t: TestGateway;
  let marksEndMs = 0;
  before(async () => {
    requireBinary('ffprobe', 'install ffmpeg (apt-get install -y ffmpeg)');
    requireBinary('ffmpeg', 'install ffmpeg (apt-get install -y ffmpeg)');
    t = await startTestGateway({ engine: createEspeakEngine({ workers: 1, logger: silentLogger }) });
    // The reference timeline for the streaming cases (the engine is deterministic), independent of test order.
    const res = await postJson(`${t.url}/v1/audio/speech`, t.ownerKey, {
      input: TEXT,
      voice_id: 'henry',
      audio_format: 'pcm',
    });
    marksEndMs = ((await res.json()) as { speech_marks: MarkNode }).speech_marks.end_time;
  });
  after(async () => {
    await t?.close();
  });

  const speech = async (fields: Record<string, unknown>) => {
    const res = await postJson(`${t.url}/v1/audio/speech`, t.ownerKey, { input: TEXT, voice_id: 'henry', ...fields });
    expect(res.status, JSON.stringify(fields)).to.equal(200);
    return (await res.json()) as {
      audio_data: string;
      audio_format: string;
      billable_characters_count: number;
      speech_marks: MarkNode;
    };
  };

  it('answers /speech with a complete mark tree', async () => {
    const body = await speech({ audio_format: 'wav' });
    expect(body.billable_characters_count).to.equal(Array.from(TEXT).length);
    expect(body.speech_marks.type).to.equal('paragraph');
    expect(body.speech_marks.chunks.map((c) => c.type)).to.deep.equal(['sentence', 'sentence']);
    const audio = probe(Buffer.from(body.audio_data, 'base64'));
    expect(audio).to.include({ codec: 'pcm_s16le', sampleRate: 24000, channels: 1 });
    expect(body.speech_marks.end_time).to.equal(marksEndMs);
    expectCompleteMarks(TEXT, flattenWords(body.speech_marks), audio.durationMs);
    expectDuration(audio.durationMs, marksEndMs, 'wav');
  });

  const speechCases: [Record<string, string>, string, number, { kind: 'pcm' | 'ulaw' | 'alaw'; rate: number }?][] = [
    [{ audio_format: 'mp3' }, 'mp3', 24000],
    [{ audio_format: 'ogg' }, 'opus', 48000],
    [{ audio_format: 'aac' }, 'aac', 24000],
    [{ audio_format: 'flac' }, 'flac', 24000],
    [{ audio_format: 'pcm' }, 'pcm_s16le', 24000, { kind: 'pcm', rate: 24000 }],
    [{ audio_format: 'ulaw' }, 'pcm_mulaw', 8000, { kind: 'ulaw', rate: 8000 }],
    [{ audio_format: 'alaw' }, 'pcm_alaw', 8000, { kind: 'alaw', rate: 8000 }],
    [{ output_format: 'pcm_16000', audio_format: 'mp3' }, 'pcm_s16le', 16000, { kind: 'pcm', rate: 16000 }],
    [{ output_format: 'pcm_44100' }, 'pcm_s16le', 44100, { kind: 'pcm', rate: 44100 }],
    [{ output_format: 'mp3_22050_64' }, 'mp3', 22050],
    [{ output_format: 'ulaw_8000' }, 'pcm_mulaw', 8000, { kind: 'ulaw', rate: 8000 }],
    [{ output_format: 'wav_24000' }, 'pcm_s16le', 24000],
  ];
  for (const [fields, codec, rate, raw] of speechCases) {
    it(`/speech ${JSON.stringify(fields)} decodes as ${codec} ${rate} Hz mono`, async () => {
      const body = await speech(fields);
      const audio = probe(Buffer.from(body.audio_data, 'base64'), raw);
      expect(audio).to.include({ codec, sampleRate: rate, channels: 1 });
      // Opus reports its 48 kHz decode rate whatever the input rate; durations are on one timeline regardless.
      expectDuration(audio.durationMs, body.speech_marks.end_time, JSON.stringify(fields));
    });
  }

  it('/speech: every output_format value decodes with its codec, rate and duration', async () => {
    const input = 'Every format, one after another, checked by ffprobe.';
    for (const outputFormat of listOutputFormats()) {
      const res = await postJson(`${t.url}/v1/audio/speech`, t.ownerKey, {
        input,
        voice_id: 'mia',
        output_format: outputFormat,
      });
      expect(res.status, outputFormat).to.equal(200);
      const body = (await res.json()) as { audio_data: string; speech_marks: MarkNode };
      const [codec = '', rateText = ''] = outputFormat.split('_');
      const rate = Number(rateText);
      const raw =
        codec === 'pcm' || codec === 'ulaw' || codec === 'alaw'
          ? { kind: codec as 'pcm' | 'ulaw' | 'alaw', rate }
          : undefined;
      const expected: Readonly<Record<string, [string, number]>> = {
        pcm: ['pcm_s16le', rate],
        wav: ['pcm_s16le', rate],
        mp3: ['mp3', rate],
        ulaw: ['pcm_mulaw', rate],
        alaw: ['pcm_alaw', rate],
        ogg: ['opus', 48000],
        aac: ['aac', rate],
        flac: ['flac', rate],
      };
      const [codecName, sampleRate] = expected[codec] ?? ['?', 0];
      const audio = probe(Buffer.from(body.audio_data, 'base64'), raw);
      expect(audio, outputFormat).to.include({ codec: codecName, sampleRate, channels: 1 });
      expectDuration(audio.durationMs, body.speech_marks.end_time, outputFormat);
    }
  });

  const streamCases: [
    Record<string, string>,
    Record<string, string>,
    string,
    string,
    number,
    { kind: 'pcm' | 'ulaw' | 'alaw'; rate: number }?,
  ][] = [
    [{ accept: 'audio/mpeg' }, {}, 'audio/mpeg', 'mp3', 24000],
    [{}, {}, 'audio/mpeg', 'mp3', 24000],
    [{ accept: 'audio/ogg' }, {}, 'audio/ogg', 'opus', 48000],
    [{ accept: 'audio/aac' }, {}, 'audio/aac', 'aac', 24000],
    [{ accept: 'audio/flac' }, {}, 'audio/flac', 'flac', 24000],
    [
      { accept: 'audio/pcm' },
      {},
      'audio/L16; rate=24000; channels=1',
      'pcm_s16le',
      24000,
      { kind: 'pcm', rate: 24000 },
    ],
    [{ accept: 'audio/basic' }, {}, 'audio/basic', 'pcm_mulaw', 8000, { kind: 'ulaw', rate: 8000 }],
    [
      { accept: 'audio/mpeg' },
      { output_format: 'pcm_8000' },
      'audio/L16; rate=8000; channels=1',
      'pcm_s16le',
      8000,
      { kind: 'pcm', rate: 8000 },
    ],
    [{}, { output_format: 'mp3_24000_32' }, 'audio/mpeg', 'mp3', 24000],
    [{}, { output_format: 'alaw_8000' }, 'audio/x-alaw-basic', 'pcm_alaw', 8000, { kind: 'alaw', rate: 8000 }],
  ];
  for (const [headers, fields, contentType, codec, rate, raw] of streamCases) {
    it(`/stream ${JSON.stringify({ ...headers, ...fields })} → ${contentType}, decodes as ${codec}`, async () => {
      const res = await postJson(
        `${t.url}/v1/audio/stream`,
        t.ownerKey,
        { input: TEXT, voice_id: 'henry', ...fields },
        headers,
      );
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal(contentType);
      expect(res.headers.get('transfer-encoding')).to.equal('chunked');
      const audio = probe(Buffer.from(await res.arrayBuffer()), raw);
      expect(audio).to.include({ codec, sampleRate: rate, channels: 1 });
      expectDuration(audio.durationMs, marksEndMs, contentType);
    });
  }

  const sseCases: [
    Record<string, string>,
    Record<string, string>,
    string,
    string,
    number,
    { kind: 'pcm' | 'ulaw' | 'alaw'; rate: number }?,
  ][] = [
    [{}, {}, 'audio/L16; rate=24000; channels=1', 'pcm_s16le', 24000, { kind: 'pcm', rate: 24000 }],
    [{ accept: 'audio/mpeg' }, {}, 'audio/mpeg', 'mp3', 24000],
    [
      { accept: 'audio/mpeg' },
      { output_format: 'ulaw_8000' },
      'audio/basic',
      'pcm_mulaw',
      8000,
      { kind: 'ulaw', rate: 8000 },
    ],
    [{}, { model: 'tts-3.2', audio_format: 'ogg' }, 'audio/ogg', 'opus', 48000],
  ];
  for (const [headers, fields, contentType, codec, rate, raw] of sseCases) {
    it(`/stream/with-timestamps ${JSON.stringify({ ...headers, ...fields })}: ${codec} chunks and complete marks`, async () => {
      const res = await postJson(
        `${t.url}/v1/audio/stream/with-timestamps`,
        t.ownerKey,
        { input: TEXT, voice_id: 'henry', ...fields },
        headers,
      );
      expect(res.status).to.equal(200);
      expect(res.headers.get('tts-audio-content-type')).to.equal(contentType);
      const { events } = parseEventStream(await res.text());
      const done = events.filter((e) => e.event === 'speech.done');
      expect(done).to.have.length(1);
      expect(events[events.length - 1]?.event).to.equal('speech.done');
      const durationMs = (JSON.parse(done[0]?.data ?? '{}') as { audio_duration_ms: number }).audio_duration_ms;
      const chunks = events
        .filter((e) => e.event === 'speech.chunk')
        .map((e) => JSON.parse(e.data) as { audio?: string; speech_marks?: Word[] });
      const audioBytes = Buffer.concat(
        chunks.flatMap((c) => (c.audio === undefined ? [] : [Buffer.from(c.audio, 'base64')])),
      );
      const words = chunks.flatMap((c) => c.speech_marks ?? []);
      expectCompleteMarks(TEXT, words, durationMs);
      const audio = probe(audioBytes, raw);
      expect(audio).to.include({ codec, sampleRate: rate, channels: 1 });
      expectDuration(audio.durationMs, durationMs, `SSE ${contentType}`);
      expectDuration(durationMs, marksEndMs, 'audio_duration_ms');
    });
  }

  it('marks every word of SSML input, with offsets into the SSML as sent', async () => {
    const ssml = '<speak>Hello <prosody rate="slow">of the</prosody> world &amp; <break time="300ms"/>friends.</speak>';
    const res = await postJson(`${t.url}/v1/audio/speech`, t.ownerKey, {
      input: ssml,
      voice_id: 'amelia',
      audio_format: 'pcm',
    });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { speech_marks: MarkNode; billable_characters_count: number };
    const words = flattenWords(body.speech_marks);
    expect(words.map((w) => w.value)).to.deep.equal(['Hello', 'of', 'the', 'world', 'friends']);
    expect(Array.from(ssml).slice(words[0]?.start, words[0]?.end).join('')).to.equal('Hello');
    expectCompleteMarks(ssml, words, Number.MAX_SAFE_INTEGER);
  });

  it('synthesises with every shared voice of the catalog', async () => {
    const list = (await (
      await fetch(`${t.url}/v1/voices?type=shared`, { headers: { authorization: `Bearer ${t.ownerKey}` } })
    ).json()) as {
      voices: { id: string; locale: string }[];
    };
    expect(list.voices.length).to.be.at.least(20);
    for (const voice of list.voices) {
      const res = await postJson(`${t.url}/v1/audio/speech`, t.ownerKey, {
        input: 'One two.',
        voice_id: voice.id,
        audio_format: 'pcm',
      });
      expect(res.status, `${voice.id} (${voice.locale})`).to.equal(200);
    }
  });

  it('synthesises a non-English voice with tts-3.0 and refuses it on tts-3.2', async () => {
    const ok = await postJson(`${t.url}/v1/audio/speech`, t.ownerKey, {
      input: 'Guten Tag, wie geht es dir?',
      voice_id: 'lena',
      audio_format: 'mp3',
    });
    expect(ok.status).to.equal(200);
    const refused = await postJson(`${t.url}/v1/audio/speech`, t.ownerKey, {
      input: 'Guten Tag',
      voice_id: 'lena',
      model: 'tts-3.2',
    });
    expect(refused.status).to.equal(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('unsupported_language');
  });
});

describe('speech gateway restart keeps the store', function () {
  this.timeout(120_000);
  it('keeps workspaces, keys and personal voices across a restart on the same DATA_DIR', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'chorus-restart-'));
    const settings = loadSpeechSettings({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir });
    const engine = () => createEspeakEngine({ workers: 1, logger: silentLogger });
    try {
      const first = await startGateway({ settings, logger: silentLogger, createEngine: engine, defaultMetrics: false });
      const key = first.bootstrapKey ?? '';
      expect(key).to.match(/^chs_/);
      const ws = (await first.database.query('SELECT id FROM workspaces'))[0]?.id as string;
      const voice = await createVoiceRepository(first.database).insertPersonal({
        workspaceId: ws,
        displayName: 'Kept',
        gender: 'female',
        locale: 'en-US',
        models: ['tts-3.0'],
        profile: { espeakVoice: 'en-us+f4' },
        sample: Buffer.from('sample'),
        sampleMediaType: 'audio/wav',
        createdByKeyId: 'key_x',
      });
      await first.close();
      const second = await startGateway({
        settings,
        logger: silentLogger,
        createEngine: engine,
        defaultMetrics: false,
      });
      try {
        expect(second.bootstrapKey).to.equal(null);
        const res = await fetch(`http://127.0.0.1:${second.port}/v1/voices/${voice.id}`, {
          headers: { authorization: `Bearer ${key}` },
        });
        expect(res.status).to.equal(200);
        const synth = await postJson(`http://127.0.0.1:${second.port}/v1/audio/speech`, key, {
          input: 'Still here.',
          voice_id: voice.id,
          audio_format: 'pcm',
        });
        expect(synth.status).to.equal(200);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
