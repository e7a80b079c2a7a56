// Resolution of the requested audio format (output_format, audio_format, Accept) into one typed OutputFormat.

export type Codec = 'pcm' | 'wav' | 'mp3' | 'opus' | 'aac' | 'flac' | 'ulaw' | 'alaw';
export type Container = 'raw' | 'wav' | 'mp3' | 'ogg' | 'adts' | 'flac';
export type SynthesisRoute = 'speech' | 'stream' | 'stream-with-timestamps';

/** The audio the client gets. */
export interface OutputFormat {
  /** Canonical `codec_sampleRate[_bitrate]` id, e.g. `mp3_24000_128`, `pcm_16000`, `wav_24000`. */
  readonly id: string;
  readonly codec: Codec;
  /** Output sample rate in Hz. */
  readonly sampleRate: number;
  /** Target bitrate for lossy codecs (mp3, opus, aac); undefined otherwise. */
  readonly bitrateKbps?: number;
  /** The media type sent in Content-Type / Tts-Audio-Content-Type. */
  readonly contentType: string;
  readonly container: Container;
  /** The short name echoed as `audio_format` in the /speech response: wav, mp3, ogg, aac, flac, pcm, ulaw, alaw. */
  readonly audioFormat: string;
}

/** The request could not name a format we can produce. */
export class FormatError extends Error {
  constructor(
    readonly code: 'validation_failed' | 'unsupported_media_type',
    message: string,
    /** The request field at fault (`output_format`, `audio_format`), or `Accept` for the header. */
    readonly field: string,
  ) {
    super(message);
    this.name = 'FormatError';
  }
}

export interface FormatRequest {
  /** Body field `output_format` (wins over the rest). */
  readonly outputFormat?: string;
  /** Body field `audio_format`. */
  readonly audioFormat?: string;
  /** The `Accept` header as received. Ignored on /speech, whose response is JSON. */
  readonly accept?: string;
  readonly route: SynthesisRoute;
}

const PCM_RATES = [8000, 16000, 22050, 24000, 44100, 48000];
const MP3_RATES = [22050, 24000];
const MP3_BITRATES = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192];
const DEFAULT_MP3_KBPS = 128;
const OPUS_KBPS = 32;
const AAC_KBPS = 64;

function pcm(rate: number, alias = 'pcm'): OutputFormat {
  return {
    id: `pcm_${rate}`,
    codec: 'pcm',
    sampleRate: rate,
    contentType: `audio/L16; rate=${rate}; channels=1`,
    container: 'raw',
    audioFormat: alias,
  };
}

function mp3(rate: number, kbps: number): OutputFormat {
  return {
    id: `mp3_${rate}_${kbps}`,
    codec: 'mp3',
    sampleRate: rate,
    bitrateKbps: kbps,
    contentType: 'audio/mpeg',
    container: 'mp3',
    audioFormat: 'mp3',
  };
}

const WAV: OutputFormat = {
  id: 'wav_24000',
  codec: 'wav',
  sampleRate: 24000,
  contentType: 'audio/wav',
  container: 'wav',
  audioFormat: 'wav',
};
const OGG: OutputFormat = {
  id: 'ogg_24000',
  codec: 'opus',
  sampleRate: 24000,
  bitrateKbps: OPUS_KBPS,
  contentType: 'audio/ogg',
  container: 'ogg',
  audioFormat: 'ogg',
};
const AAC: OutputFormat = {
  id: 'aac_24000',
  codec: 'aac',
  sampleRate: 24000,
  bitrateKbps: AAC_KBPS,
  contentType: 'audio/aac',
  container: 'adts',
  audioFormat: 'aac',
};
const FLAC: OutputFormat = {
  id: 'flac_24000',
  codec: 'flac',
  sampleRate: 24000,
  contentType: 'audio/flac',
  container: 'flac',
  audioFormat: 'flac',
};
const ULAW: OutputFormat = {
  id: 'ulaw_8000',
  codec: 'ulaw',
  sampleRate: 8000,
  contentType: 'audio/basic',
  container: 'raw',
  audioFormat: 'ulaw',
};
const ALAW: OutputFormat = {
  id: 'alaw_8000',
  codec: 'alaw',
  sampleRate: 8000,
  contentType: 'audio/x-alaw-basic',
  container: 'raw',
  audioFormat: 'alaw',
};

const AUDIO_FORMATS: Readonly<Record<string, OutputFormat>> = {
  wav: WAV,
  mp3: mp3(24000, DEFAULT_MP3_KBPS),
  ogg: OGG,
  aac: AAC,
  flac: FLAC,
  pcm: pcm(24000),
  ulaw: ULAW,
  alaw: ALAW,
};

const ACCEPT_TYPES: Readonly<Record<string, OutputFormat>> = {
  'audio/mpeg': mp3(24000, DEFAULT_MP3_KBPS),
  'audio/ogg': OGG,
  'audio/aac': AAC,
  'audio/flac': FLAC,
  'audio/pcm': pcm(24000),
  'audio/basic': ULAW,
};

const ROUTE_DEFAULTS: Readonly<Record<SynthesisRoute, OutputFormat>> = {
  speech: WAV,
  stream: mp3(24000, DEFAULT_MP3_KBPS),
  'stream-with-timestamps': pcm(24000),
};

/** Every output_format value accepted on /speech (streaming routes accept all but wav). */
export function listOutputFormats(): string[] {
  return [
    ...PCM_RATES.map((r) => `pcm_${r}`),
    ...MP3_RATES.flatMap((r) => MP3_BITRATES.map((b) => `mp3_${r}_${b}`)),
    'ulaw_8000',
    'alaw_8000',
    'ogg_24000',
    'aac_24000',
    'flac_24000',
    'wav_24000',
  ];
}

function parseOutputFormat(value: string): OutputFormat | undefined {
  const parts = value.split('_');
  const [codec, rateText, kbpsText] = parts;
  const rate = Number(rateText);
  if (rateText !== String(rate)) return undefined;
  if (parts.length === 3) {
    const kbps = Number(kbpsText);
    if (codec === 'mp3' && MP3_RATES.includes(rate) && MP3_BITRATES.includes(kbps) && kbpsText === String(kbps)) {
      return mp3(rate, kbps);
    }
    return undefined;
  }
  if (parts.length !== 2) return undefined;
  if (codec === 'pcm' && PCM_RATES.includes(rate)) return pcm(rate);
  const fixed: Readonly<Record<string, OutputFormat>> = {
    ulaw_8000: ULAW,
    alaw_8000: ALAW,
    ogg_24000: OGG,
    aac_24000: AAC,
    flac_24000: FLAC,
    wav_24000: WAV,
    mp3_24000: mp3(24000, DEFAULT_MP3_KBPS),
    mp3_22050: mp3(22050, DEFAULT_MP3_KBPS),
  };
  return fixed[value];
}

interface AcceptEntry {
  readonly type: string;
  readonly q: number;
}

function parseAccept(header: string): AcceptEntry[] {
  return header
    .split(',')
    .map((part) => {
      const [type = '', ...params] = part.split(';').map((s) => s.trim());
      const qParam = params.find((p) => /^q=/i.test(p));
      const q = qParam === undefined ? 1 : Number(qParam.slice(2));
      return { type: type.toLowerCase(), q: Number.isFinite(q) ? q : 0 };
    })
    .filter((e) => e.type !== '' && e.q > 0)
    .sort((a, b) => b.q - a.q);
}

/**
 * Picks the output format: `output_format` wins, then `audio_format`, then (streaming routes) `Accept`, then the
 * route's default (wav on /speech, mp3 on /stream, 24 kHz L16 PCM in the timestamped stream). Throws
 * `FormatError`: `validation_failed` for an unknown value or wav on a streaming route, `unsupported_media_type`
 * when Accept names only media types we cannot produce.
 */
export function resolveOutputFormat(request: FormatRequest): OutputFormat {
  const streaming = request.route !== 'speech';
  const noWav = (format: OutputFormat, field: string): OutputFormat => {
    if (streaming && format.codec === 'wav') {
      // A WAV header needs the data length, which a stream does not know when it starts.
      throw new FormatError('validation_failed', 'wav is not available on streaming routes; use pcm', field);
    }
    return format;
  };
  if (request.outputFormat !== undefined) {
    const format = parseOutputFormat(request.outputFormat);
    if (format === undefined) {
      throw new FormatError(
        'validation_failed',
        `unknown output_format "${request.outputFormat}"; use codec_sampleRate[_bitrate] such as mp3_24000_128 or pcm_16000`,
        'output_format',
      );
    }
    return noWav(format, 'output_format');
  }
  if (request.audioFormat !== undefined) {
    const format = AUDIO_FORMATS[request.audioFormat];
    if (format === undefined) {
      throw new FormatError(
        'validation_failed',
        `unknown audio_format "${request.audioFormat}"; allowed: ${Object.keys(AUDIO_FORMATS).join(', ')}`,
        'audio_format',
      );
    }
    return noWav(format, 'audio_format');
  }
  if (streaming && request.accept !== undefined && request.accept.trim() !== '') {
    const entries = parseAccept(request.accept);
    for (const entry of entries) {
      if (entry.type === '*/*' || entry.type === 'audio/*') return ROUTE_DEFAULTS[request.route];
      const format = ACCEPT_TYPES[entry.type];
      if (format !== undefined) return format;
    }
    throw new FormatError(
      'unsupported_media_type',
      `none of the Accept types can be produced; supported: ${Object.keys(ACCEPT_TYPES).join(', ')}`,
      'Accept',
    );
  }
  return ROUTE_DEFAULTS[request.route];
}
