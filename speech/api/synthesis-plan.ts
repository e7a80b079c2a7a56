// Everything decided before synthesis starts: parsed input, voice, model, language and output format.
import { resolveOutputFormat, type OutputFormat, type SynthesisRoute } from '../audio/formats.js';
import type { VoiceProfile } from '../engine/engine.js';
import { parseSpeechInput, type ParsedInput } from '../engine/ssml.js';
import {
  checkSynthesisModel,
  DEFAULT_MODEL_ID,
  findModel,
  type ModelInfo,
  type ModelRejection,
} from '../models/index.js';
import type { VoiceRepository } from '../store/index.js';
import { voiceProfileOf } from '../voices/index.js';
import { SpeechError, validationError } from './speech-error.js';
import type { SpeechRequest } from './speech-request.js';

export interface SynthesisPlan {
  readonly request: SpeechRequest;
  readonly parsed: ParsedInput;
  readonly model: ModelInfo;
  /** Language to speak, `xx-XX`. */
  readonly language: string;
  readonly voice: VoiceProfile;
  readonly format: OutputFormat;
  /** Code points of the input with SSML tags removed. */
  readonly billableCharacters: number;
}

function rejectionError(rejection: ModelRejection): SpeechError {
  if (rejection.kind === 'unknown_model') return validationError({ model: rejection.message });
  return new SpeechError(rejection.kind, rejection.message);
}

/**
 * Checks the request in a fixed order (SSML, model and route, output format, voice, language) and returns the
 * plan, or throws SpeechError: 400 validation_failed / unsupported_model / unsupported_language /
 * speech_marks_unsupported, 404 not_found for a voice the workspace cannot see, 415 for an impossible Accept.
 */
export async function planSynthesis(
  voices: VoiceRepository,
  workspaceId: string,
  request: SpeechRequest,
  route: SynthesisRoute,
  accept: string | undefined,
): Promise<SynthesisPlan> {
  const parsed = parseSpeechInput(request.input);
  const modelId = request.model ?? DEFAULT_MODEL_ID;
  const known = findModel(modelId);
  if (known === undefined) throw validationError({ model: `unknown model "${modelId}"` });
  // Route rules first, so a legacy model on the timestamps route is refused before the voice is looked up.
  if (!known.routes.includes(route)) {
    const routeCheck = checkSynthesisModel({ modelId, route, voiceLocale: 'en-US', voiceModels: [modelId] });
    if (!routeCheck.ok) throw rejectionError(routeCheck.rejection);
  }
  const format = resolveOutputFormat({
    route,
    ...(request.outputFormat === undefined ? {} : { outputFormat: request.outputFormat }),
    ...(request.audioFormat === undefined ? {} : { audioFormat: request.audioFormat }),
    ...(accept === undefined ? {} : { accept }),
  });
  const voice = await voices.findVisible(request.voiceId, workspaceId);
  if (voice === null) throw new SpeechError('not_found', `voice "${request.voiceId}" not found`);
  const check = checkSynthesisModel({
    modelId,
    route,
    voiceLocale: voice.locale,
    voiceModels: voice.models,
    ...(request.language === undefined ? {} : { language: request.language }),
  });
  if (!check.ok) throw rejectionError(check.rejection);
  return {
    request,
    parsed,
    model: check.model,
    language: check.language,
    voice: voiceProfileOf(voice),
    format,
    billableCharacters: parsed.billableCharacters,
  };
}
