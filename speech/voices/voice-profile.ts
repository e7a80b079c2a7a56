// Turns a stored voice's profile JSON into the engine's VoiceProfile.
import type { VoiceProfile } from '../engine/engine.js';
import type { VoiceRecord } from '../store/index.js';

function percent(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

// espeak language names for locales whose profile lacks a voice (e.g. a personal voice stored by an old version).
const FALLBACK_ESPEAK: Readonly<Record<string, string>> = {
  'en-us': 'en-us',
  'en-gb': 'en',
  'de-de': 'de',
  'es-es': 'es',
  'es-mx': 'es-419',
  'fr-fr': 'fr',
  'it-it': 'it',
  'pt-br': 'pt-br',
};

/** The engine profile of a voice; an unusable stored profile falls back to the locale's plain espeak voice. */
export function voiceProfileOf(voice: VoiceRecord): VoiceProfile {
  const p = voice.profile;
  const espeakVoice =
    typeof p.espeakVoice === 'string' && p.espeakVoice !== ''
      ? p.espeakVoice
      : (FALLBACK_ESPEAK[voice.locale.toLowerCase()] ?? 'en-us');
  const ratePercent = percent(p.ratePercent);
  const pitchPercent = percent(p.pitchPercent);
  const pitchRangePercent = percent(p.pitchRangePercent);
  return {
    espeakVoice,
    ...(ratePercent === undefined ? {} : { ratePercent }),
    ...(pitchPercent === undefined ? {} : { pitchPercent }),
    ...(pitchRangePercent === undefined ? {} : { pitchRangePercent }),
  };
}
