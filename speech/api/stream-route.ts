// POST /v1/audio/stream: raw audio, chunked, sent as the encoder produces it (spec A.2).
import type { Request, Response } from 'express';
import type { ApiDeps } from './api-deps.js';
import { toSpeechError } from './error-conversion.js';
import { contextOf, principalOf } from './request-context.js';
import { onClientGone, writeChunk } from './response-stream.js';
import { parseSpeechRequest } from './speech-request.js';
import { startSynthesis } from './synthesis-session.js';
import { planSynthesis } from './synthesis-plan.js';

export function streamRoute(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const principal = principalOf(res);
    const request = parseSpeechRequest(req.body, 'stream');
    const plan = await planSynthesis(deps.voices, principal.workspaceId, request, 'stream', req.get('accept'));
    const session = startSynthesis(deps.engine, deps.createEncoder, plan);
    let clientGone = false;
    onClientGone(res, () => {
      clientGone = true;
      session.abort();
    });
    const labels = { model: plan.model.id, route: 'stream' };
    // The status line waits for the first audio bytes, so a failure before them is still a proper error response.
    const start = (): void => {
      if (res.headersSent) return;
      res.status(200);
      res.setHeader('Content-Type', plan.format.contentType);
      res.setHeader('Cache-Control', 'no-store');
    };
    try {
      for await (const out of session.outputs) {
        if (out.type !== 'audio' || out.bytes.length === 0) continue;
        start();
        await writeChunk(res, out.bytes);
      }
    } catch (err) {
      const outcome = clientGone ? 'aborted' : 'error';
      deps.metrics.syntheses.inc({ ...labels, outcome });
      if (!res.headersSent) throw err;
      if (!clientGone) {
        const code = toSpeechError(err).code;
        deps.metrics.streamFailures.inc({ route: 'stream', code });
        deps.logger.error('audio stream failed after it had started', {
          request_id: contextOf(res).requestId,
          code,
          cause: String(err),
        });
      }
      // Cutting the connection is the only way left to tell the client the audio is incomplete.
      res.destroy();
      return;
    }
    start();
    res.end();
    deps.metrics.syntheses.inc({ ...labels, outcome: 'ok' });
    deps.metrics.billableCharacters.inc(labels, plan.billableCharacters);
  };
}
