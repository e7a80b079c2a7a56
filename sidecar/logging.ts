// The winston-backed Logger: logrus-compatible text lines or upstream's JSON shape, with URL credentials masked.
import { Writable } from 'node:stream';
import winston from 'winston';
import type { LogFields, Logger } from './logger.js';
import type { LogFormat, LogLevel } from './settings/settings.js';

// logrus order: a lower number is more severe; a logger at level L prints every entry with number <= L.
const LEVEL_NUMBERS: Readonly<Record<LogLevel, number>> = {
  panic: 0,
  fatal: 1,
  error: 2,
  warn: 3,
  info: 4,
  debug: 5,
  trace: 6,
};

// logrus prints `warning`, not `warn`.
const LEVEL_NAMES: Readonly<Record<string, string>> = { warn: 'warning' };

const CREDENTIALS_IN_URL = /([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^@/\s]+@/g;

/** Replaces `user:pass@` in any URL inside `text` by `*****@` (upstream masks `redis://user:pass@host` this way). */
export function maskCredentials(text: string): string {
  return text.replace(CREDENTIALS_IN_URL, '$1*****@');
}

// logrus quotes a text value unless every character is in this set.
const BARE_TEXT = /^[a-zA-Z0-9\-._/@^+]+$/;

function textValue(value: unknown): string {
  let s: string;
  if (typeof value === 'string') s = value;
  else if (value instanceof Error) s = value.message;
  else if (typeof value === 'object' && value !== null) s = JSON.stringify(value);
  else s = String(value);
  s = maskCredentials(s);
  return BARE_TEXT.test(s) ? s : JSON.stringify(s);
}

/** RFC3339 with the offset as `Z`, seconds only (logrus text) or with sub-second digits (RFC3339Nano in JSON). */
function rfc3339(date: Date, subSecond: boolean): string {
  const iso = date.toISOString();
  if (subSecond) return iso.replace(/\.?0+Z$/, 'Z');
  return iso.slice(0, 19) + 'Z';
}

export interface LoggingOptions {
  readonly level: LogLevel;
  readonly format: LogFormat;
  /** Where lines go; standard error by default (as logrus). */
  readonly stream?: NodeJS.WritableStream;
  /** For tests: the time stamp source. */
  readonly now?: () => Date;
}

export interface ProcessLogger extends Logger {
  /** Logs at `fatal` level; the caller exits. */
  fatal(message: string, fields?: LogFields): void;
  /** Flushes and closes the transport. */
  close(): Promise<void>;
}

const MESSAGE = Symbol.for('message');

/** Builds the process logger from LOG_LEVEL / LOG_FORMAT. */
export function createLogger(options: LoggingOptions): ProcessLogger {
  const now = options.now ?? (() => new Date());
  const render = winston.format((info) => {
    const level = String(info.level);
    const levelName = LEVEL_NAMES[level] ?? level;
    const message = maskCredentials(String(info.message));
    const fields = (info.fields ?? {}) as Record<string, unknown>;
    const time = now();
    let line: string;
    if (options.format === 'json') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(fields)) {
        out[k] = typeof v === 'string' ? maskCredentials(v) : v instanceof Error ? v.message : v;
      }
      out['@message'] = message;
      out['@timestamp'] = rfc3339(time, true);
      out['level'] = levelName;
      // Go encodes a map with its keys sorted; keep that order so lines diff cleanly against upstream.
      const sorted: Record<string, unknown> = {};
      for (const k of Object.keys(out).sort()) sorted[k] = out[k];
      line = JSON.stringify(sorted);
    } else {
      // logrus text formatter: time, level, msg, then the fields sorted by key.
      line = `time=${textValue(rfc3339(time, false))} level=${levelName} msg=${textValue(message)}`;
      for (const key of Object.keys(fields).sort()) line += ` ${key}=${textValue(fields[key])}`;
    }
    (info as Record<symbol, unknown>)[MESSAGE] = line;
    return info;
  });
  const stream: NodeJS.WritableStream =
    options.stream ??
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        process.stderr.write(chunk, () => callback());
      },
    });
  const logger = winston.createLogger({
    levels: LEVEL_NUMBERS,
    level: options.level,
    format: render(),
    transports: [new winston.transports.Stream({ stream, eol: '\n' })],
  });
  const log = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (LEVEL_NUMBERS[level] > LEVEL_NUMBERS[options.level]) return;
    logger.log({ level, message, fields });
  };
  return {
    debug: (m, f) => log('debug', m, f),
    info: (m, f) => log('info', m, f),
    warn: (m, f) => log('warn', m, f),
    error: (m, f) => log('error', m, f),
    fatal: (m, f) => log('fatal', m, f),
    close: () =>
      new Promise<void>((resolve) => {
        logger.once('finish', () => resolve());
        logger.end();
      }),
  };
}
