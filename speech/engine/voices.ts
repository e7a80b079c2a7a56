// Mapping of request locales (xx-XX) and voice profiles to espeak-ng voice names.
import type { VoiceProfile } from './engine.js';

/**
 * Locale → espeak voice name (as `set_voice` takes it). The first block is what tts-3.0 officially supports;
 * the rest are locales espeak speaks reasonably, kept for catalogs that list them.
 */
const LOCALE_VOICES: Readonly<Record<string, string>> = {
  'en-US': 'en-us',
  'en-GB': 'en',
  'de-DE': 'de',
  'es-ES': 'es',
  'es-MX': 'es-419',
  'fr-FR': 'fr',
  'it-IT': 'it',
  'pt-BR': 'pt-br',
  'en-AU': 'en',
  'en-CA': 'en-us',
  'en-IE': 'en',
  'en-IN': 'en',
  'en-NZ': 'en',
  'en-ZA': 'en',
  'de-AT': 'de',
  'de-CH': 'de',
  'es-US': 'es-419',
  'es-AR': 'es-419',
  'es-CO': 'es-419',
  'fr-CA': 'fr',
  'fr-BE': 'fr-be',
  'fr-CH': 'fr-ch',
  'pt-PT': 'pt',
  'nl-NL': 'nl',
  'nl-BE': 'nl',
  'pl-PL': 'pl',
  'sv-SE': 'sv',
  'da-DK': 'da',
  'nb-NO': 'nb',
  'fi-FI': 'fi',
  'cs-CZ': 'cs',
  'el-GR': 'el',
  'ru-RU': 'ru',
  'uk-UA': 'uk',
  'tr-TR': 'tr',
  'hu-HU': 'hu',
  'ro-RO': 'ro',
  'hi-IN': 'hi',
  'ja-JP': 'ja',
  'ko-KR': 'ko',
  'zh-CN': 'cmn',
  'vi-VN': 'vi',
  'id-ID': 'id',
  'ar-SA': 'ar',
  'he-IL': 'he',
};

/** Locales the engine maps, for catalogs (`xx-XX`). */
export function supportedLocales(): string[] {
  return Object.keys(LOCALE_VOICES);
}

/** The espeak voice for a locale, or undefined when the engine has no mapping. Case-insensitive. */
export function espeakVoiceForLocale(locale: string): string | undefined {
  const [lang = '', region = ''] = locale.split('-');
  return LOCALE_VOICES[`${lang.toLowerCase()}-${region.toUpperCase()}`];
}

const PRIMARY_ALIASES: Readonly<Record<string, string>> = { cmn: 'zh', nb: 'no' };

function primaryLanguage(espeakName: string): string {
  const primary = espeakName.split('-')[0]?.toLowerCase() ?? '';
  return PRIMARY_ALIASES[primary] ?? primary;
}

/** Splits `en-us+f3` into base and variant. */
export function splitEspeakVoice(name: string): { readonly base: string; readonly variant?: string } {
  const plus = name.indexOf('+');
  if (plus < 0) return { base: name };
  return { base: name.slice(0, plus), variant: name.slice(plus + 1) };
}

/**
 * The espeak voice name to speak `language` with `voice`: the voice's own accent when it already speaks that
 * language (an en-GB voice asked for en-US keeps its accent), otherwise the locale's voice; the variant
 * (timbre, e.g. `+f3`) is kept either way. An unmapped language keeps the voice as it is.
 */
export function resolveEspeakVoice(voice: VoiceProfile, language: string): string {
  const { base, variant } = splitEspeakVoice(voice.espeakVoice);
  const localeVoice = espeakVoiceForLocale(language);
  const lang = language.split('-')[0]?.toLowerCase() ?? '';
  const sameLanguage = primaryLanguage(base) === (PRIMARY_ALIASES[lang] ?? lang);
  const chosen = localeVoice === undefined || sameLanguage ? base : localeVoice;
  return variant === undefined ? chosen : `${chosen}+${variant}`;
}

/** espeak's defaults (words per minute, pitch and range on its 0-100 scale), the 100% of a VoiceProfile. */
export const ESPEAK_DEFAULTS = { rateWpm: 175, pitch: 50, range: 50 } as const;

/** Numeric parameters for a voice profile, clamped to espeak's accepted ranges. */
export function espeakParameters(voice: VoiceProfile): { rateWpm: number; pitch: number; range: number } {
  const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, Math.round(v)));
  return {
    rateWpm: clamp((ESPEAK_DEFAULTS.rateWpm * (voice.ratePercent ?? 100)) / 100, 80, 450),
    pitch: clamp((ESPEAK_DEFAULTS.pitch * (voice.pitchPercent ?? 100)) / 100, 0, 100),
    range: clamp((ESPEAK_DEFAULTS.range * (voice.pitchRangePercent ?? 100)) / 100, 0, 100),
  };
}
