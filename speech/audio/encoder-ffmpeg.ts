// mp3 / ogg-opus / aac / flac encoding through an ffmpeg child process, streamed through pipes.
import { spawn } from 'node:child_process';
import { ChunkQueue } from './chunk-queue.js';
import type { AudioEncoder } from './encoder.js';
import { EncoderError } from './encoder-error.js';
import type { OutputFormat } from './formats.js';
import { createResampler, type Resampler } from './resampler.js';

export interface FfmpegEncoderOptions {
  /** The ffmpeg binary; default `ffmpeg` from PATH. */
  readonly ffmpegPath?: string;
}

/** How an ffmpeg encoder's process ended. */
export interface FfmpegExit {
  /** The process never ran (binary missing or not executable). */
  readonly startFailed: boolean;
}

/** An AudioEncoder backed by one ffmpeg process, with what a pool of started encoders needs to know. */
export interface FfmpegEncoder extends AudioEncoder {
  /** True until the process has exited, was killed or failed to start. */
  readonly running: boolean;
  /** Settles once the process is gone (never rejects). */
  readonly exited: Promise<FfmpegExit>;
}

/** Keeps the stderr tail for error messages without growing without bound. */
const STDERR_KEEP_BYTES = 4096;

/** The codec and muxer arguments for one output format. */
export function ffmpegCodecArgs(format: OutputFormat): string[] {
  const kbps = `${format.bitrateKbps ?? 0}k`;
  switch (format.codec) {
    case 'mp3':
      return ['-c:a', 'libmp3lame', '-b:a', kbps, '-f', 'mp3'];
    case 'opus':
      // 20 ms Ogg pages so that each packet leaves as soon as it is encoded.
      return ['-c:a', 'libopus', '-b:a', kbps, '-frame_duration', '20', '-page_duration', '20000', '-f', 'ogg'];
    case 'aac':
      return ['-c:a', 'aac', '-b:a', kbps, '-f', 'adts'];
    case 'flac':
      return ['-c:a', 'flac', '-f', 'flac'];
    default:
      throw new EncoderError('bad_input', `ffmpeg encoder does not handle ${format.codec}`);
  }
}

/** The full ffmpeg command line (without the binary) for PCM at the output rate on stdin. */
export function ffmpegArgs(format: OutputFormat): string[] {
  return [
    '-hide_banner',
    '-loglevel',
    'error',
    // Raw PCM needs no probing; these cut the first output byte from ~200 ms to ~60 ms (spec B 2.9).
    '-probesize',
    '32',
    '-analyzeduration',
    '0',
    '-f',
    's16le',
    '-ar',
    String(format.sampleRate),
    '-ac',
    '1',
    '-i',
    'pipe:0',
    '-map_metadata',
    '-1',
    '-fflags',
    '+bitexact',
    '-flush_packets',
    '1',
    ...ffmpegCodecArgs(format),
    'pipe:1',
  ];
}

/** Starts ffmpeg right away (its start-up overlaps synthesis); PCM is resampled in TypeScript first. */
export function createFfmpegEncoder(format: OutputFormat, options: FfmpegEncoderOptions = {}): FfmpegEncoder {
  const args = ffmpegArgs(format);
  const binary = options.ffmpegPath ?? 'ffmpeg';
  const queue = new ChunkQueue<Buffer>();
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let closed = false;
  let aborted = false;
  let resampler: Resampler | undefined;
  let inputRate = 0;
  let running = true;
  let settleExit: (exit: FfmpegExit) => void = () => undefined;
  const exited = new Promise<FfmpegExit>((resolve) => {
    settleExit = (exit) => {
      running = false;
      resolve(exit);
    };
  });

  child.stdout.on('data', (chunk: Buffer) => queue.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEEP_BYTES);
  });
  // EPIPE when ffmpeg dies early; the exit handler reports the real cause.
  child.stdin.on('error', () => undefined);
  child.on('error', (err: NodeJS.ErrnoException) => {
    closed = true;
    if (child.pid === undefined) settleExit({ startFailed: true });
    const code = err.code === 'ENOENT' ? 'encoder_unavailable' : 'encoder_failed';
    const hint = err.code === 'ENOENT' ? ` (${binary} not found: install ffmpeg)` : '';
    queue.fail(new EncoderError(code, `cannot run ffmpeg${hint}: ${err.message}`, { cause: err }));
  });
  child.on('close', (exitCode, signal) => {
    settleExit({ startFailed: child.pid === undefined });
    if (aborted) return;
    if (exitCode === 0) queue.end();
    else {
      const why = exitCode === null ? `signal ${signal ?? '?'}` : `exit code ${exitCode}`;
      queue.fail(new EncoderError('encoder_failed', `ffmpeg failed (${why}): ${stderr.trim()}`));
    }
  });

  const send = (pcm: Int16Array): void => {
    if (pcm.length === 0 || !child.stdin.writable) return;
    child.stdin.write(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  };

  return {
    write(pcm, sampleRate) {
      if (closed) return;
      if (resampler === undefined) {
        resampler = createResampler(sampleRate, format.sampleRate);
        inputRate = sampleRate;
      } else if (sampleRate !== inputRate) {
        this.abort();
        return;
      }
      send(resampler.process(pcm));
    },
    end() {
      if (closed) return;
      closed = true;
      if (resampler !== undefined) send(resampler.flush());
      child.stdin.end();
    },
    output: queue,
    get running() {
      return running;
    },
    exited,
    abort() {
      if (aborted) return;
      aborted = true;
      closed = true;
      child.stdin.destroy();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      queue.fail(new EncoderError('aborted', 'encoder aborted'));
    },
  };
}
