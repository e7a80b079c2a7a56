// POST /v1/audio/speech: the whole audio as Base64 JSON with billing and the speech-mark tree (spec A.2).
import type { Request, Response } from 'express';
import type { WordMark } from '../engine/engine.js';
import { buildMarkTree, type SentenceSpan } from '../engine/mark-tree.js';
import type { ApiDeps } from './api-deps.js';
import { principalOf } from './request-context.js';
import { onClientGone } from './response-stream.js';
import { parseSpeechRequest } from './speech-request.js';
import { startSynthesis } from './synthesis-session.js';
import { planSynthesis } from './synthesis-plan.js';

export function speechRoute(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const principal = principalOf(res);
    const request = parseSpeechRequest(req.body, 'speech');
    const plan = await planSynthesis(deps.voices, principal.workspaceId, request, 'speech', undefined);
    const session = startSynthesis(deps.engine, deps.createEncoder, plan);
    onClientGone(res, () => session.abort());
    const audio: Buffer[] = [];
    const marks: WordMark[] = [];
    const sentences: SentenceSpan[] = [];
    const labels = { model: plan.model.id, route: 'speech' };
    try {
      for await (const out of session.outputs) {
        if (out.type === 'audio') audio.push(out.bytes);
        else if (out.type === 'marks') marks.push(...out.marks);
        else if (out.type === 'sentence') sentences.push(out.span);
      }
    } catch (err) {
      deps.metrics.syntheses.inc({ ...labels, outcome: res.destroyed ? 'aborted' : 'error' });
      throw err;
    }
    deps.metrics.syntheses.inc({ ...labels, outcome: 'ok' });
    deps.metrics.billableCharacters.inc(labels, plan.billableCharacters);
    res.status(200).json({
      audio_data: Buffer.concat(audio).toString('base64'),
      audio_format: plan.format.audioFormat,
      billable_characters_count: plan.billableCharacters,
      speech_marks: buildMarkTree(request.input, sentences, marks),
    });
  };
}
