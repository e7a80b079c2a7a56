// The synthesis models the gateway serves, their routes and languages (spec A.2), as constant data.

export type ModelRoute = 'speech' | 'stream' | 'stream-with-timestamps' | 'dialogue';

export interface ModelInfo {
  readonly id: string;
  /** The model used when a request omits `model`; exactly one synthesis model has it. */
  readonly isDefault: boolean;
  /** Routes the model may be passed to. */
  readonly routes: readonly ModelRoute[];
  /**
   * Officially supported languages (`xx-XX`). `englishOnly` models accept every `en-XX` in addition;
   * multilingual models accept every `en-XX` too (English is routed by region-less rules).
   */
  readonly languages: readonly string[];
  /** True when only English voices and languages may be used (400 `unsupported_language` otherwise). */
  readonly englishOnly: boolean;
  readonly streaming: boolean;
  /** True when the model can produce word marks on the timestamps route. */
  readonly speechMarks: boolean;
  readonly deprecated: boolean;
}

const MULTILINGUAL = ['en-US', 'en-GB', 'de-DE', 'es-ES', 'es-MX', 'fr-FR', 'it-IT', 'pt-BR'] as const;
const ENGLISH = ['en-US', 'en-GB'] as const;

export const SYNTHESIS_MODELS: readonly ModelInfo[] = [
  {
    id: 'tts-3.0',
    isDefault: true,
    routes: ['speech', 'stream', 'stream-with-timestamps'],
    languages: MULTILINGUAL,
    englishOnly: false,
    streaming: true,
    speechMarks: true,
    deprecated: false,
  },
  {
    id: 'tts-3.2',
    isDefault: false,
    routes: ['speech', 'stream', 'stream-with-timestamps'],
    languages: ENGLISH,
    englishOnly: true,
    streaming: true,
    speechMarks: true,
    deprecated: false,
  },
  {
    id: 'tts-english',
    isDefault: false,
    routes: ['speech', 'stream'],
    languages: ENGLISH,
    englishOnly: true,
    streaming: true,
    speechMarks: false,
    deprecated: true,
  },
  {
    id: 'tts-multilingual',
    isDefault: false,
    routes: ['speech', 'stream'],
    languages: MULTILINGUAL,
    englishOnly: false,
    streaming: true,
    speechMarks: false,
    deprecated: true,
  },
];

export const DIALOGUE_MODELS: readonly ModelInfo[] = [
  {
    id: 'tts-dialogue-1',
    isDefault: false,
    routes: ['dialogue'],
    languages: ENGLISH,
    englishOnly: true,
    streaming: false,
    speechMarks: true,
    deprecated: false,
  },
];

export const DEFAULT_MODEL_ID = 'tts-3.0';

/** A synthesis or dialogue model by id, or undefined. */
export function findModel(id: string): ModelInfo | undefined {
  return SYNTHESIS_MODELS.find((m) => m.id === id) ?? DIALOGUE_MODELS.find((m) => m.id === id);
}

/** True for `en` and any `en-XX` tag (case-insensitive). */
export function isEnglish(locale: string): boolean {
  return /^en(-|$)/i.test(locale);
}

/** True when `model` accepts `language` (case-insensitive `xx-XX`). */
export function modelSupportsLanguage(model: ModelInfo, language: string): boolean {
  if (isEnglish(language)) return true;
  if (model.englishOnly) return false;
  return model.languages.some((l) => l.toLowerCase() === language.toLowerCase());
}

/** Models a voice of `locale` can be used with: English voices get every synthesis model. */
export function modelsForVoiceLocale(locale: string): string[] {
  return SYNTHESIS_MODELS.filter((m) => modelSupportsLanguage(m, locale)).map((m) => m.id);
}
