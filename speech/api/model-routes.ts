// GET /v1/audio/models: the model catalog in one response (spec A.2), with the voices each model accepts.
import type { Request, Response } from 'express';
import { DIALOGUE_MODELS, SYNTHESIS_MODELS, type ModelInfo } from '../models/index.js';
import type { VoiceRecord } from '../store/index.js';
import type { ApiDeps } from './api-deps.js';
import { principalOf } from './request-context.js';

export interface ModelJson {
  readonly id: string;
  readonly default: boolean;
  readonly routes: readonly string[];
  readonly languages: readonly string[];
  readonly voices: readonly string[] | 'all';
  readonly streaming: boolean;
  readonly speech_marks: boolean;
  readonly deprecated: boolean;
}

function toModelJson(model: ModelInfo, visible: readonly VoiceRecord[]): ModelJson {
  const accepted = visible.filter((v) => v.models.includes(model.id)).map((v) => v.id);
  return {
    id: model.id,
    default: model.isDefault,
    routes: model.routes,
    languages: model.languages,
    voices: accepted.length === visible.length && visible.length > 0 ? 'all' : accepted,
    streaming: model.streaming,
    speech_marks: model.speechMarks,
    deprecated: model.deprecated,
  };
}

export function listModelsRoute(deps: ApiDeps) {
  return async (_req: Request, res: Response): Promise<void> => {
    const visible = await deps.voices.listVisible(principalOf(res).workspaceId, {}, null, null);
    // Dialogue models take any English voice per turn.
    const english = visible.filter((v) => /^en-/i.test(v.locale));
    res.json({
      models: SYNTHESIS_MODELS.map((m) => toModelJson(m, visible)),
      dialogue_models: DIALOGUE_MODELS.map((m) => ({ ...toModelJson(m, visible), voices: english.map((v) => v.id) })),
    });
  };
}
