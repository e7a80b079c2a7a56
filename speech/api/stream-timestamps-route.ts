// POST /v1/audio/stream/with-timestamps: SSE of Base64 audio chunks and word marks (spec A.2 events).
import type { Request, Response } from 'express';
import type { ApiDeps } from './api-deps.js';
import { toSpeechError } from './error-conversion.js';
import { contextOf, principalOf } from './request-context.js';
import { onClientGone } from './response-stream.js';
import { parseSpeechRequest } from './speech-request.js';
import { openSse, type SseWriter } from './sse-writer.js';
import { startSynthesis } from './synthesis-session.js';
import { planSynthesis } from './synthesis-plan.js';

export function streamTimestampsRoute(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const route = 'stream-with-timestamps';
    const principal = principalOf(res);
    const request = parseSpeechRequest(req.body, route);
    const plan = await planSynthesis(deps.voices, principal.workspaceId, request, route, req.get('accept'));
    const session = startSynthesis(deps.engine, deps.createEncoder, plan);
    let clientGone = false;
    onClientGone(res, () => {
      clientGone = true;
      session.abort();
    });
    // Like /stream, the status line waits for the engine's first output, so a busy or failed engine still gets a
    // proper error response; from then on failures are `speech.error` events and idle time gets keepalives.
    let sse: SseWriter | undefined;
    const open = (): SseWriter => {
      sse ??= openSse(res, deps.sseKeepaliveMs, { 'Tts-Audio-Content-Type': plan.format.contentType });
      return sse;
    };
    const labels = { model: plan.model.id, route };
    try {
      for await (const out of session.outputs) {
        if (out.type === 'audio') {
          if (out.bytes.length > 0) await open().send('speech.chunk', { audio: out.bytes.toString('base64') });
        } else if (out.type === 'marks') {
          if (out.marks.length > 0) await open().send('speech.chunk', { speech_marks: out.marks });
        } else if (out.type === 'done') {
          await open().send('speech.done', { audio_duration_ms: out.audioDurationMs });
        }
      }
      deps.metrics.syntheses.inc({ ...labels, outcome: 'ok' });
      deps.metrics.billableCharacters.inc(labels, plan.billableCharacters);
    } catch (err) {
      deps.metrics.syntheses.inc({ ...labels, outcome: clientGone ? 'aborted' : 'error' });
      if (sse === undefined && !clientGone) throw err;
      if (!clientGone) {
        const error = toSpeechError(err);
        deps.metrics.streamFailures.inc({ route, code: error.code });
        deps.logger.error('event stream failed after it had started', {
          request_id: contextOf(res).requestId,
          code: error.code,
          cause: String(err),
        });
        await open().send('speech.error', { error: { code: error.code, message: error.message } });
      }
    } finally {
      sse?.end();
    }
  };
}
