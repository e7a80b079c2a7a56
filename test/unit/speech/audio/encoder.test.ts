import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createAudioEncoder, EncoderError, type AudioEncoder } from '../../../../speech/audio/encoder.js';
import { resolveOutputFormat, type OutputFormat } from '../../../../speech/audio/formats.js';
import { requireBinary } from '../../../support/process.js';

const run = promisify(execFile);

function tone(seconds: number, rate = 22050): Int16Array {
  return Int16Array.from({ length: Math.round(rate * seconds) }, (_v, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)),
  );
}

async function collect(encoder: AudioEncoder): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const b of encoder.output) parts.push(b);
  return Buffer.concat(parts);
}

async function encode(format: OutputFormat, seconds: number): Promise<Buffer> {
  const encoder = createAudioEncoder(format);
  const pcm = tone(seconds);
  for (let i = 0; i < pcm.length; i += 2205) encoder.write(pcm.subarray(i, i + 2205), 22050);
  encoder.end();
  return collect(encoder);
}

interface Probe {
  readonly codec: string;
  readonly sampleRate: number;
  readonly channels: number;
  readonly duration: number;
}

async function probe(file: string, rawArgs: readonly string[] = []): Promise<Probe> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    ...rawArgs,
    '-show_entries',
    'stream=codec_name,sample_rate,channels',
    '-of',
    'json',
    file,
  ]);
  const json = JSON.parse(stdout) as {
    streams: { codec_name: string; sample_rate: string; channels: number }[];
  };
  const s = json.streams[0];
  if (s === undefined) throw new Error(`no stream in ${file}`);
  // Decode instead of trusting the container: a piped FLAC has no total-sample count in its header.
  const decoded = await run(
    'ffmpeg',
    ['-v', 'error', ...rawArgs, '-i', file, '-f', 's16le', '-ac', '1', '-ar', '8000', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return {
    codec: s.codec_name,
    sampleRate: Number(s.sample_rate),
    channels: s.channels,
    duration: decoded.stdout.length / 2 / 8000,
  };
}

describe('audio encoders (decoded with ffprobe)', function () {
  this.timeout(20000);
  let dir = '';
  before(() => {
    requireBinary('ffmpeg', 'apt-get install -y ffmpeg');
    requireBinary('ffprobe', 'apt-get install -y ffmpeg');
    dir = mkdtempSync(path.join(tmpdir(), 'chorus-enc-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: { id: string; codec: string; rate: number; raw?: string[] }[] = [
    { id: 'wav_24000', codec: 'pcm_s16le', rate: 24000 },
    { id: 'pcm_16000', codec: 'pcm_s16le', rate: 16000, raw: ['-f', 's16le', '-ar', '16000', '-ac', '1'] },
    { id: 'pcm_48000', codec: 'pcm_s16le', rate: 48000, raw: ['-f', 's16le', '-ar', '48000', '-ac', '1'] },
    { id: 'ulaw_8000', codec: 'pcm_mulaw', rate: 8000, raw: ['-f', 'mulaw', '-ar', '8000', '-ac', '1'] },
    { id: 'alaw_8000', codec: 'pcm_alaw', rate: 8000, raw: ['-f', 'alaw', '-ar', '8000', '-ac', '1'] },
    { id: 'mp3_24000_64', codec: 'mp3', rate: 24000 },
    { id: 'mp3_22050_128', codec: 'mp3', rate: 22050 },
    { id: 'ogg_24000', codec: 'opus', rate: 48000 }, // Opus always decodes at 48 kHz
    { id: 'aac_24000', codec: 'aac', rate: 24000 },
    { id: 'flac_24000', codec: 'flac', rate: 24000 },
  ];
  for (const c of cases) {
    it(`${c.id}: ${c.codec}, ${c.rate} Hz, mono, 1.5 s`, async () => {
      const format = resolveOutputFormat({ outputFormat: c.id, route: 'speech' });
      const bytes = await encode(format, 1.5);
      const file = path.join(dir, c.id);
      writeFileSync(file, bytes);
      const p = await probe(file, c.raw);
      expect(p.codec).to.equal(c.codec);
      expect(p.sampleRate).to.equal(c.rate);
      expect(p.channels).to.equal(1);
      expect(p.duration).to.be.closeTo(1.5, 0.1);
    });
  }

  it('writes an exact WAV header for /speech', async () => {
    const bytes = await encode(resolveOutputFormat({ outputFormat: 'wav_24000', route: 'speech' }), 1);
    expect(bytes.toString('ascii', 0, 4)).to.equal('RIFF');
    expect(bytes.readUInt32LE(4)).to.equal(bytes.length - 8);
    expect(bytes.readUInt32LE(40)).to.equal(24000 * 2);
  });

  it('streams mp3 bytes before the input ends', async () => {
    const encoder = createAudioEncoder(resolveOutputFormat({ outputFormat: 'mp3_24000_128', route: 'stream' }));
    encoder.write(tone(2), 22050);
    const it = encoder.output[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.done).to.equal(false);
    encoder.end();
    for (let r = await it.next(); !r.done; r = await it.next()) {
      // drain
    }
  });

  it('kills ffmpeg on abort and fails the output with aborted', async () => {
    const encoder = createAudioEncoder(resolveOutputFormat({ outputFormat: 'aac_24000', route: 'stream' }));
    encoder.write(tone(0.5), 22050);
    encoder.abort();
    let error: unknown;
    try {
      await collect(encoder);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(EncoderError);
    expect((error as EncoderError).code).to.equal('aborted');
  });

  it('reports a missing ffmpeg binary as encoder_unavailable', async () => {
    const format = resolveOutputFormat({ outputFormat: 'mp3_24000_128', route: 'stream' });
    const encoder = createAudioEncoder(format, { ffmpegPath: '/nonexistent/ffmpeg' });
    encoder.write(tone(0.1), 22050);
    encoder.end();
    let error: unknown;
    try {
      await collect(encoder);
    } catch (err) {
      error = err;
    }
    expect((error as EncoderError).code).to.equal('encoder_unavailable');
  });

  it('rejects a sample-rate change mid-stream', async () => {
    const encoder = createAudioEncoder(resolveOutputFormat({ outputFormat: 'pcm_16000', route: 'stream' }));
    encoder.write(tone(0.1), 22050);
    encoder.write(tone(0.1, 16000), 16000);
    let error: unknown;
    try {
      await collect(encoder);
    } catch (err) {
      error = err;
    }
    expect((error as EncoderError).code).to.equal('bad_input');
  });
});
