// Decides, before any audio is made, whether a model may serve a voice/language on a route (spec A.2).
import type { ModelInfo, ModelRoute } from './model-catalog.js';
import { findModel, isEnglish, modelSupportsLanguage } from './model-catalog.js';

/** Why a request cannot be served; the API turns each kind into its error code. */
export type ModelRejection =
  | { readonly kind: 'unknown_model'; readonly message: string }
  | { readonly kind: 'unsupported_model'; readonly message: string }
  | { readonly kind: 'speech_marks_unsupported'; readonly message: string }
  | { readonly kind: 'unsupported_language'; readonly message: string };

export interface ModelCheckInput {
  readonly modelId: string;
  readonly route: ModelRoute;
  /** The voice's locale, e.g. de-DE. */
  readonly voiceLocale: string;
  /** Model ids the voice lists. */
  readonly voiceModels: readonly string[];
  /** The request's `language`, when given. */
  readonly language?: string;
}

export type ModelCheckResult =
  | { readonly ok: true; readonly model: ModelInfo; readonly language: string }
  | { readonly ok: false; readonly rejection: ModelRejection };

function reject(kind: ModelRejection['kind'], message: string): ModelCheckResult {
  return { ok: false, rejection: { kind, message } };
}

/**
 * Resolves the language to synthesise (`language`, else the voice's locale) and checks, in order: the model
 * exists, it serves the route (legacy models on the timestamps route → speech_marks_unsupported), an
 * English-only model gets an English voice and language, the model supports the language, the voice supports
 * the model.
 */
export function checkSynthesisModel(input: ModelCheckInput): ModelCheckResult {
  const model = findModel(input.modelId);
  if (model === undefined) return reject('unknown_model', `unknown model "${input.modelId}"`);
  if (!model.routes.includes(input.route)) {
    if (input.route === 'stream-with-timestamps' && model.routes.includes('speech')) {
      return reject(
        'speech_marks_unsupported',
        `model ${model.id} does not produce speech marks; use tts-3.0 or tts-3.2 on this route`,
      );
    }
    return reject('unsupported_model', `model ${model.id} is not available on the ${input.route} route`);
  }
  const language = input.language ?? input.voiceLocale;
  if (model.englishOnly && !isEnglish(input.voiceLocale)) {
    return reject(
      'unsupported_language',
      `model ${model.id} supports English only; the voice's locale is ${input.voiceLocale}`,
    );
  }
  if (!modelSupportsLanguage(model, language)) {
    return reject(
      'unsupported_language',
      model.englishOnly
        ? `model ${model.id} supports English only; language ${language} was requested`
        : `model ${model.id} does not support language ${language}; supported: ${model.languages.join(', ')}`,
    );
  }
  if (!input.voiceModels.includes(model.id)) {
    return reject('unsupported_model', `the voice does not support model ${model.id}`);
  }
  return { ok: true, model, language };
}
