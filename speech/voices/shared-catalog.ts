// The shared voice catalog: 24 voices over eight locales, each an espeak-ng voice and variant plus prosody.
import { modelsForVoiceLocale } from '../models/index.js';
import type { SharedVoiceSeed, VoiceGender } from '../store/index.js';

interface CatalogEntry {
  readonly id: string;
  readonly displayName: string;
  readonly gender: VoiceGender;
  readonly locale: string;
  /** espeak-ng voice with variant, e.g. `en-us+f3`. */
  readonly espeakVoice: string;
  readonly ratePercent?: number;
  readonly pitchPercent?: number;
}

// Variants +m1..+m7 and +f1..+f5 are espeak-ng's built-in male/female variants; the pitch offsets keep two
// voices of one locale apart even where espeak has only one base voice for the language.
const ENTRIES: readonly CatalogEntry[] = [
  { id: 'olivia', displayName: 'Olivia', gender: 'female', locale: 'en-US', espeakVoice: 'en-us+f3' },
  { id: 'henry', displayName: 'Henry', gender: 'male', locale: 'en-US', espeakVoice: 'en-us+m3' },
  { id: 'mia', displayName: 'Mia', gender: 'female', locale: 'en-US', espeakVoice: 'en-us+f2', ratePercent: 110 },
  { id: 'jack', displayName: 'Jack', gender: 'male', locale: 'en-US', espeakVoice: 'en-us+m7', pitchPercent: 90 },
  { id: 'amelia', displayName: 'Amelia', gender: 'female', locale: 'en-GB', espeakVoice: 'en+f4' },
  { id: 'oliver', displayName: 'Oliver', gender: 'male', locale: 'en-GB', espeakVoice: 'en+m1' },
  {
    id: 'charlotte',
    displayName: 'Charlotte',
    gender: 'female',
    locale: 'en-GB',
    espeakVoice: 'en+f1',
    ratePercent: 95,
  },
  { id: 'lena', displayName: 'Lena', gender: 'female', locale: 'de-DE', espeakVoice: 'de+f2' },
  { id: 'lukas', displayName: 'Lukas', gender: 'male', locale: 'de-DE', espeakVoice: 'de+m2' },
  { id: 'felix', displayName: 'Felix', gender: 'male', locale: 'de-DE', espeakVoice: 'de+m5', pitchPercent: 85 },
  { id: 'lucia', displayName: 'Lucía', gender: 'female', locale: 'es-ES', espeakVoice: 'es+f3' },
  { id: 'pablo', displayName: 'Pablo', gender: 'male', locale: 'es-ES', espeakVoice: 'es+m3' },
  { id: 'valentina', displayName: 'Valentina', gender: 'female', locale: 'es-MX', espeakVoice: 'es-419+f4' },
  { id: 'diego', displayName: 'Diego', gender: 'male', locale: 'es-MX', espeakVoice: 'es-419+m4' },
  { id: 'camille', displayName: 'Camille', gender: 'female', locale: 'fr-FR', espeakVoice: 'fr+f2' },
  { id: 'louis', displayName: 'Louis', gender: 'male', locale: 'fr-FR', espeakVoice: 'fr+m1' },
  { id: 'chloe', displayName: 'Chloé', gender: 'female', locale: 'fr-FR', espeakVoice: 'fr+f5', pitchPercent: 110 },
  { id: 'giulia', displayName: 'Giulia', gender: 'female', locale: 'it-IT', espeakVoice: 'it+f3' },
  { id: 'marco', displayName: 'Marco', gender: 'male', locale: 'it-IT', espeakVoice: 'it+m6' },
  { id: 'ana', displayName: 'Ana', gender: 'female', locale: 'pt-BR', espeakVoice: 'pt-br+f1' },
  { id: 'rafael', displayName: 'Rafael', gender: 'male', locale: 'pt-BR', espeakVoice: 'pt-br+m2' },
  {
    id: 'beatriz',
    displayName: 'Beatriz',
    gender: 'female',
    locale: 'pt-BR',
    espeakVoice: 'pt-br+f4',
    ratePercent: 105,
  },
  { id: 'sofia', displayName: 'Sofia', gender: 'female', locale: 'it-IT', espeakVoice: 'it+f5', ratePercent: 95 },
  { id: 'hans', displayName: 'Hans', gender: 'male', locale: 'de-DE', espeakVoice: 'de+m7', ratePercent: 90 },
];

/** The shared catalog as store seeds (the gateway syncs it into the store at start; idempotent). */
export function sharedVoiceSeeds(): SharedVoiceSeed[] {
  return ENTRIES.map((e) => ({
    id: e.id,
    displayName: e.displayName,
    gender: e.gender,
    locale: e.locale,
    models: modelsForVoiceLocale(e.locale),
    profile: {
      espeakVoice: e.espeakVoice,
      ...(e.ratePercent === undefined ? {} : { ratePercent: e.ratePercent }),
      ...(e.pitchPercent === undefined ? {} : { pitchPercent: e.pitchPercent }),
    },
  }));
}
