// GET /v1/voices (filtered, cursor-paged), GET/DELETE /v1/voices/{id} and GET /v1/voices/{id}/sample (spec A.3).
import type { Request, Response } from 'express';
import type { VoiceFilter, VoiceGender, VoiceType } from '../store/index.js';
import { findModel } from '../models/index.js';
import { listVoicePage, MAX_PAGE_SIZE, parseLocaleRange, toVoiceJson } from '../voices/index.js';
import type { ApiDeps } from './api-deps.js';
import { FieldErrors } from './json-body.js';
import { principalOf } from './request-context.js';
import { SpeechError } from './speech-error.js';

export const VOICE_LIST_PARAMS = ['cursor', 'limit', 'type', 'locale', 'gender', 'model'] as const;
const TYPES: readonly VoiceType[] = ['shared', 'personal'];
const GENDERS: readonly VoiceGender[] = ['male', 'female', 'not_specified'];

interface VoiceListQuery {
  readonly filter: VoiceFilter;
  readonly limit: number | null;
  readonly cursor: string | null;
}

function parseVoiceListQuery(query: Request['query']): VoiceListQuery {
  const errors = new FieldErrors();
  const single = (name: string): string | undefined => {
    const value = query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') {
      errors.add(name, 'must be given once');
      return undefined;
    }
    return value;
  };
  const filter: { -readonly [K in keyof VoiceFilter]: VoiceFilter[K] } = {};
  const type = single('type');
  if (type !== undefined) {
    const found = TYPES.find((t) => t === type);
    if (found === undefined) errors.add('type', `must be one of ${TYPES.join(', ')}`);
    else filter.type = found;
  }
  const gender = single('gender');
  if (gender !== undefined) {
    const found = GENDERS.find((g) => g === gender);
    if (found === undefined) errors.add('gender', `must be one of ${GENDERS.join(', ')}`);
    else filter.gender = found;
  }
  const locale = single('locale');
  if (locale !== undefined) {
    const range = parseLocaleRange(locale);
    if (range === null) errors.add('locale', 'must be a BCP-47 language range such as en or en-US');
    else filter.localeRange = range;
  }
  const model = single('model');
  if (model !== undefined) {
    if (findModel(model) === undefined) errors.add('model', `unknown model "${model}"`);
    else filter.model = model;
  }
  let limit: number | null = null;
  const limitText = single('limit');
  if (limitText !== undefined) {
    if (!/^\d{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_PAGE_SIZE) {
      errors.add('limit', `must be an integer from 1 to ${MAX_PAGE_SIZE}`);
    } else limit = Number(limitText);
  }
  const cursor = single('cursor');
  if (cursor !== undefined && cursor === '') errors.add('cursor', 'must not be empty');
  errors.throwIfAny();
  return { filter, limit, cursor: cursor ?? null };
}

export function listVoicesRoute(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const principal = principalOf(res);
    const query = parseVoiceListQuery(req.query);
    const page = await listVoicePage(deps.voices, deps.cursors, { workspaceId: principal.workspaceId, ...query });
    res.json({ voices: page.voices.map(toVoiceJson), has_more: page.hasMore, next_cursor: page.nextCursor });
  };
}

function voiceNotFound(id: string): SpeechError {
  // One message for unknown ids and other workspaces' voices: the two must be indistinguishable.
  return new SpeechError('not_found', `voice "${id}" not found`);
}

function voiceIdParam(req: Request): string {
  const id = req.params.id;
  return typeof id === 'string' ? id : '';
}

export function getVoiceRoute(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const id = voiceIdParam(req);
    const voice = await deps.voices.findVisible(id, principalOf(res).workspaceId);
    if (voice === null) throw voiceNotFound(id);
    res.json(toVoiceJson(voice));
  };
}

export function deleteVoiceRoute(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const id = voiceIdParam(req);
    const workspaceId = principalOf(res).workspaceId;
    const voice = await deps.voices.findVisible(id, workspaceId);
    if (voice === null) throw voiceNotFound(id);
    if (voice.type === 'shared') throw new SpeechError('forbidden', 'shared voices cannot be deleted');
    if (!(await deps.voices.deletePersonal(id, workspaceId))) throw voiceNotFound(id);
    res.status(204).end();
  };
}

export function voiceSampleRoute(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const id = voiceIdParam(req);
    const sample = await deps.voices.findSample(id, principalOf(res).workspaceId);
    if (sample === null) {
      throw id !== '' && (await deps.voices.findVisible(id, principalOf(res).workspaceId))?.type === 'shared'
        ? new SpeechError('not_found', `voice "${id}" is a shared voice and has no downloadable sample`)
        : voiceNotFound(id);
    }
    res.status(200);
    res.setHeader('Content-Type', sample.mediaType);
    res.setHeader('Content-Disposition', `attachment; filename="${id}-sample"`);
    res.end(sample.bytes);
  };
}
