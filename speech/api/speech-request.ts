// The body of the three synthesis routes, parsed once into a typed, readonly request (spec A.2).
import type { SynthesisRoute } from '../audio/formats.js';
import { codePointLength, FieldErrors, strictObject } from './json-body.js';

export interface SpeechOptions {
  readonly loudnessNormalization?: boolean;
  readonly textNormalization?: boolean;
}

export interface SpeechRequest {
  readonly input: string;
  readonly voiceId: string;
  readonly audioFormat?: string;
  /** `xx-XX`, normalised to lower-case language and upper-case region. */
  readonly language?: string;
  readonly model?: string;
  readonly options: SpeechOptions;
  readonly outputFormat?: string;
}

export const SPEECH_REQUEST_FIELDS = [
  'input',
  'voice_id',
  'audio_format',
  'language',
  'model',
  'options',
  'output_format',
] as const;
export const SPEECH_OPTION_FIELDS = ['loudness_normalization', 'text_normalization'] as const;

/** Input limits in Unicode code points (SSML tags included). */
export const INPUT_LIMITS: Readonly<Record<SynthesisRoute, number>> = {
  speech: 2000,
  stream: 20000,
  'stream-with-timestamps': 20000,
};

const LANGUAGE = /^([a-z]{2})-([a-z]{2})$/i;

/** Validates the body for `route`; throws SpeechError `validation_failed` listing every bad field. */
export function parseSpeechRequest(body: unknown, route: SynthesisRoute): SpeechRequest {
  const object = strictObject(body, SPEECH_REQUEST_FIELDS);
  const errors = new FieldErrors();
  const input = errors.requiredString(object, 'input');
  if (input !== undefined) {
    const length = codePointLength(input);
    if (input.trim() === '') errors.add('input', 'must not be empty');
    else if (length > INPUT_LIMITS[route]) {
      errors.add('input', `is ${length} characters long; at most ${INPUT_LIMITS[route]} are allowed on this route`);
    }
  }
  const voiceId = errors.requiredString(object, 'voice_id');
  if (voiceId !== undefined && voiceId.trim() === '') errors.add('voice_id', 'must not be empty');
  const audioFormat = errors.optionalString(object, 'audio_format');
  const outputFormat = errors.optionalString(object, 'output_format');
  const model = errors.optionalString(object, 'model');
  let language = errors.optionalString(object, 'language');
  if (language !== undefined) {
    const match = LANGUAGE.exec(language);
    if (match === null) errors.add('language', 'must have the form xx-XX (ISO 639-1 language, ISO 3166-1 region)');
    else language = `${(match[1] ?? '').toLowerCase()}-${(match[2] ?? '').toUpperCase()}`;
  }
  let options: SpeechOptions = {};
  if (object.options !== undefined && object.options !== null) {
    try {
      const raw = strictObject(object.options, SPEECH_OPTION_FIELDS, 'options');
      const loudnessNormalization = errors.optionalBoolean(
        raw,
        'loudness_normalization',
        'options.loudness_normalization',
      );
      const textNormalization = errors.optionalBoolean(raw, 'text_normalization', 'options.text_normalization');
      options = {
        ...(loudnessNormalization === undefined ? {} : { loudnessNormalization }),
        ...(textNormalization === undefined ? {} : { textNormalization }),
      };
    } catch (err) {
      const fields = (err as { fields?: Record<string, string> }).fields ?? {};
      for (const [field, message] of Object.entries(fields)) errors.add(field, message);
    }
  }
  errors.throwIfAny();
  return {
    input: input ?? '',
    voiceId: voiceId ?? '',
    options,
    ...(audioFormat === undefined ? {} : { audioFormat }),
    ...(language === undefined ? {} : { language }),
    ...(model === undefined ? {} : { model }),
    ...(outputFormat === undefined ? {} : { outputFormat }),
  };
}
