// Express middleware: authenticate the Bearer key (401) and check a route's scope and permission (403).
import type { NextFunction, Request, Response } from 'express';
import { deniedReason, type Authenticator, type Requirement } from '../auth/index.js';
import { principalOf } from './request-context.js';
import { SpeechError } from './speech-error.js';

const CHALLENGE = 'Bearer realm="chorus-speech"';

/** Puts the Principal on res.locals; every failure kind answers the same 401 so keys cannot be probed. */
export function authenticate(authenticator: Authenticator) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const result = await authenticator.authenticate(req.get('authorization'));
    if (!result.ok) {
      next(
        new SpeechError('unauthenticated', 'a valid API key is required: Authorization: Bearer <key>', undefined, {
          'WWW-Authenticate': CHALLENGE,
        }),
      );
      return;
    }
    res.locals.principal = result.principal;
    next();
  };
}

/** 403 `forbidden` unless the authenticated key has the scope (and its role the permission). */
export function authorize(requirement: Requirement) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const reason = deniedReason(principalOf(res), requirement);
    next(reason === null ? undefined : new SpeechError('forbidden', reason));
  };
}
