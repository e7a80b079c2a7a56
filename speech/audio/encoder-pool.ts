// Pre-started ffmpeg encoders for the route defaults, so that a request does not wait for ffmpeg's start-up.
import type { Logger } from '../../sidecar/logger.js';
import { createAudioEncoder, type AudioEncoder, type EncoderOptions } from './encoder.js';
import { createFfmpegEncoder, type FfmpegEncoder } from './encoder-ffmpeg.js';
import type { OutputFormat } from './formats.js';

export interface EncoderPoolOptions extends EncoderOptions {
  /** Formats to keep started encoders for; only ffmpeg formats (the TypeScript encoders start instantly). */
  readonly formats: readonly OutputFormat[];
  /** Idle encoders kept per format; default 2. 0 turns the pool off. */
  readonly size?: number;
  readonly logger: Logger;
}

export interface EncoderPool {
  /**
   * An encoder for `format`: a started one from the pool when one is idle (the pool then starts a replacement
   * after the current event-loop turn), else a new one from `createAudioEncoder`. Throws what that throws.
   */
  create(format: OutputFormat): AudioEncoder;
  /** Idle started encoders right now, over all formats. */
  readonly idle: number;
  /** Kills the idle encoders and stops refilling; resolves once their processes have exited. Idempotent. */
  close(): Promise<void>;
}

/** Idle encoders that die one after another before being taken: after this many the format is given up. */
const MAX_IDLE_DEATHS = 3;

interface FormatSlot {
  readonly format: OutputFormat;
  readonly idle: FfmpegEncoder[];
  /** Consecutive idle encoders that exited before anyone took them. */
  deaths: number;
  disabled: boolean;
  refillScheduled: boolean;
}

const FFMPEG_CODECS = new Set<OutputFormat['codec']>(['mp3', 'opus', 'aac', 'flac']);

export function createEncoderPool(options: EncoderPoolOptions): EncoderPool {
  const size = options.size ?? 2;
  if (!Number.isInteger(size) || size < 0) throw new RangeError(`encoder pool size must be >= 0, got ${size}`);
  const { logger } = options;
  const slots = new Map<string, FormatSlot>();
  let closed = false;
  let closing: Promise<void> | undefined;

  for (const format of options.formats) {
    if (!FFMPEG_CODECS.has(format.codec)) throw new RangeError(`${format.id} is not an ffmpeg format`);
    if (size > 0 && !slots.has(format.id)) {
      slots.set(format.id, { format, idle: [], deaths: 0, disabled: false, refillScheduled: false });
    }
  }

  const start = (slot: FormatSlot): void => {
    const encoder = createFfmpegEncoder(slot.format, options);
    slot.idle.push(encoder);
    void encoder.exited.then((exit) => {
      const index = slot.idle.indexOf(encoder);
      // Taken encoders are the request's business; only an idle one that dies concerns the pool.
      if (index < 0 || closed) return;
      slot.idle.splice(index, 1);
      slot.deaths += 1;
      if (exit.startFailed || slot.deaths >= MAX_IDLE_DEATHS) {
        slot.disabled = true;
        for (const other of slot.idle.splice(0)) other.abort();
        logger.warn('no pre-started encoders: ffmpeg does not stay up', {
          format: slot.format.id,
          reason: exit.startFailed ? 'ffmpeg could not be started' : `${slot.deaths} idle processes exited`,
        });
        return;
      }
      scheduleRefill(slot);
    });
  };

  const refill = (slot: FormatSlot): void => {
    slot.refillScheduled = false;
    while (!closed && !slot.disabled && slot.idle.length < size) start(slot);
  };

  // The spawn blocks the event loop; setImmediate puts it after the response that took the encoder has started.
  const scheduleRefill = (slot: FormatSlot): void => {
    if (slot.refillScheduled || closed || slot.disabled) return;
    slot.refillScheduled = true;
    setImmediate(() => refill(slot));
  };

  for (const slot of slots.values()) refill(slot);

  return {
    create(format) {
      const slot = slots.get(format.id);
      if (slot !== undefined && !closed) {
        // An encoder can have died since the last check (its exit event not yet handled): skip it.
        let encoder = slot.idle.shift();
        while (encoder !== undefined && !encoder.running) encoder = slot.idle.shift();
        if (encoder !== undefined) {
          slot.deaths = 0;
          scheduleRefill(slot);
          return encoder;
        }
        scheduleRefill(slot);
      }
      return createAudioEncoder(format, options);
    },
    get idle() {
      let n = 0;
      for (const slot of slots.values()) n += slot.idle.length;
      return n;
    },
    close() {
      closed = true;
      closing ??= (async () => {
        const idle = [...slots.values()].flatMap((slot) => slot.idle.splice(0));
        for (const encoder of idle) encoder.abort();
        await Promise.all(idle.map((encoder) => encoder.exited));
      })();
      return closing;
    },
  };
}
