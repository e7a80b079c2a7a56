import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { silentLogger } from '../../../../sidecar/logger.js';
import { EncoderError, type AudioEncoder } from '../../../../speech/audio/encoder.js';
import { createEncoderPool, type EncoderPool } from '../../../../speech/audio/encoder-pool.js';
import { resolveOutputFormat } from '../../../../speech/audio/formats.js';
import { requireBinary } from '../../../support/process.js';

const run = promisify(execFile);
const MP3 = resolveOutputFormat({ outputFormat: 'mp3_24000_128', route: 'stream' });
const PCM = resolveOutputFormat({ outputFormat: 'pcm_24000', route: 'stream' });

function tone(seconds: number, rate: number): Int16Array {
  return Int16Array.from({ length: Math.round(rate * seconds) }, (_v, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)),
  );
}

async function collect(encoder: AudioEncoder): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const b of encoder.output) parts.push(b);
  return Buffer.concat(parts);
}

async function failureOf(encoder: AudioEncoder): Promise<unknown> {
  try {
    await collect(encoder);
  } catch (err) {
    return err;
  }
  throw new Error('expected the encoder to fail');
}

/** Live ffmpeg processes whose parent is this test process (from /proc; zombies excluded). */
function ffmpegChildren(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid ...; comm may contain spaces, so split after the closing parenthesis.
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (comm === 'ffmpeg' && Number(ppid) === process.pid && state !== 'Z') pids.push(Number(entry));
  }
  return pids.sort((a, b) => a - b);
}

/** Polls (no wall-clock assertion) until `check` holds; fails with `what` after many tries. */
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting until ${what}`);
}

describe('encoder pool (pre-started ffmpeg)', function () {
  this.timeout(30000);
  let dir = '';
  let pool: EncoderPool | undefined;

  before(() => {
    requireBinary('ffmpeg', 'apt-get install -y ffmpeg');
    requireBinary('ffprobe', 'apt-get install -y ffmpeg');
    dir = mkdtempSync(path.join(tmpdir(), 'encoder-pool-'));
  });
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('hands out a started encoder that produces valid mp3, and refills to its size', async () => {
    pool = createEncoderPool({ formats: [MP3], logger: silentLogger });
    expect(pool.idle).to.equal(2);
    expect(ffmpegChildren()).to.have.length(2);
    const encoder = pool.create(MP3);
    expect(pool.idle).to.equal(1);
    const pcm = tone(1.5, 24000);
    for (let i = 0; i < pcm.length; i += 2400) encoder.write(pcm.subarray(i, i + 2400), 24000);
    encoder.end();
    const file = path.join(dir, 'pooled.mp3');
    writeFileSync(file, await collect(encoder));
    const { stdout } = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'stream=codec_name,sample_rate,channels:format=duration',
      '-of',
      'json',
      file,
    ]);
    const json = JSON.parse(stdout) as {
      streams: { codec_name: string; sample_rate: string; channels: number }[];
      format: { duration: string };
    };
    expect(json.streams[0]).to.deep.equal({ codec_name: 'mp3', sample_rate: '24000', channels: 1 });
    expect(Number(json.format.duration)).to.be.closeTo(1.5, 0.1);
    await until('the pool is refilled', () => pool?.idle === 2);
    expect(ffmpegChildren()).to.have.length(2);
  });

  it('leaves no ffmpeg process after close, and still creates encoders afterwards', async () => {
    pool = createEncoderPool({ formats: [MP3], logger: silentLogger });
    const taken = [pool.create(MP3), pool.create(MP3), pool.create(MP3)];
    // Taking more than the pool holds never makes it hold more than its size.
    expect(pool.idle).to.be.at.most(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(pool.idle).to.equal(2);
    for (const encoder of taken) encoder.abort();
    await pool.close();
    await pool.close();
    await until('the aborted encoders have exited', () => ffmpegChildren().length === 0);
    expect(pool.idle).to.equal(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ffmpegChildren()).to.deep.equal([]);
    const late = pool.create(MP3);
    expect(pool.idle).to.equal(0);
    late.write(tone(0.2, 24000), 24000);
    late.end();
    expect((await collect(late)).length).to.be.greaterThan(0);
  });

  it('replaces an idle encoder whose process died', async () => {
    pool = createEncoderPool({ formats: [MP3], logger: silentLogger });
    const before = ffmpegChildren();
    expect(before).to.have.length(2);
    process.kill(before[0] as number, 'SIGKILL');
    await until('a replacement has started', () => {
      const now = ffmpegChildren();
      return now.length === 2 && !now.includes(before[0] as number);
    });
    expect(pool.idle).to.equal(2);
  });

  it('keeps no pool when ffmpeg is missing; encoders then fail with encoder_unavailable', async () => {
    pool = createEncoderPool({ formats: [MP3], ffmpegPath: '/nonexistent/ffmpeg', logger: silentLogger });
    await until('the pool has given up', () => pool?.idle === 0);
    const encoder = pool.create(MP3);
    encoder.end();
    const err = await failureOf(encoder);
    expect(err).to.be.instanceOf(EncoderError).with.property('code', 'encoder_unavailable');
    await new Promise((resolve) => setImmediate(resolve));
    expect(pool.idle).to.equal(0);
  });

  it('creates other formats directly and refuses bad options', async () => {
    pool = createEncoderPool({ formats: [MP3], size: 1, logger: silentLogger });
    expect(pool.idle).to.equal(1);
    const pcm = pool.create(PCM);
    expect(pool.idle).to.equal(1);
    pcm.write(Int16Array.from([1, 2, 3]), 24000);
    pcm.end();
    expect((await collect(pcm)).length).to.equal(6);
    expect(() => createEncoderPool({ formats: [MP3], size: -1, logger: silentLogger })).to.throw(RangeError);
    expect(() => createEncoderPool({ formats: [MP3], size: 1.5, logger: silentLogger })).to.throw(RangeError);
    expect(() => createEncoderPool({ formats: [PCM], logger: silentLogger })).to.throw(RangeError);
    const off = createEncoderPool({ formats: [MP3], size: 0, logger: silentLogger });
    expect(off.idle).to.equal(0);
    await off.close();
  });
});
