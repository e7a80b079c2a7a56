// The public JSON shape of a voice (spec A.3); the owning workspace is never exposed.
import type { VoiceRecord } from '../store/index.js';

export interface VoiceJson {
  readonly id: string;
  readonly display_name: string;
  readonly type: 'shared' | 'personal';
  readonly gender: 'male' | 'female' | 'not_specified';
  readonly locale: string;
  readonly models: readonly { readonly name: string; readonly languages: readonly { readonly locale: string }[] }[];
  readonly avatar_image: string | null;
  readonly created_at: string;
}

export function toVoiceJson(voice: VoiceRecord): VoiceJson {
  return {
    id: voice.id,
    display_name: voice.displayName,
    type: voice.type,
    gender: voice.gender,
    locale: voice.locale,
    models: voice.models.map((name) => ({ name, languages: [{ locale: voice.locale }] })),
    avatar_image: voice.avatarImage,
    created_at: voice.createdAt.toISOString(),
  };
}
