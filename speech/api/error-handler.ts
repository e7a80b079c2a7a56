// Renders every failure as the error envelope of spec A.1 and logs the ones that are the server's fault.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../sidecar/logger.js';
import { toSpeechError } from './error-conversion.js';
import { contextOf } from './request-context.js';
import { SpeechError } from './speech-error.js';

export interface ErrorEnvelope {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly request_id: string;
    readonly fields?: Readonly<Record<string, string>>;
  };
}

export function errorEnvelope(error: SpeechError, requestId: string): ErrorEnvelope {
  return {
    error: {
      code: error.code,
      message: error.message,
      request_id: requestId,
      ...(error.code === 'validation_failed' && error.fields !== undefined ? { fields: error.fields } : {}),
    },
  };
}

/** Sends the envelope for `err` (headers must not have been sent). */
export function sendError(res: Response, err: unknown, logger: Logger): void {
  const error = toSpeechError(err);
  const requestId = contextOf(res)?.requestId ?? '';
  if (error.status >= 500) {
    logger.error('request failed', {
      request_id: requestId,
      code: error.code,
      cause: String(err),
      stack: (err as Error)?.stack,
    });
  }
  for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
  res.status(error.status).json(errorEnvelope(error, requestId));
}

/** The final express error middleware. */
export function errorHandler(logger: Logger) {
  return (err: unknown, _req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) {
      // The stream routes handle their own mid-stream failures; this only cuts a connection left open.
      res.destroy();
      return;
    }
    void next;
    sendError(res, err, logger);
  };
}

/** 404 for every path that no route claims. */
export function notFoundHandler() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    next(new SpeechError('not_found', `no route for ${req.method} ${req.path}`));
  };
}
