// Per-request context: X-Request-ID (echoed or generated) and the API version pinned by Tts-Version (spec A.1).
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Principal } from '../auth/index.js';
import { SpeechError } from './speech-error.js';

export const CURRENT_API_VERSION = '2026-09-13';

/** What the gateway knows about the request, kept on res.locals. */
export interface RequestContext {
  readonly requestId: string;
  /** The version the request is served under (YYYY-MM-DD). */
  readonly apiVersion: string;
  /** True for a version before CURRENT_API_VERSION (legacy voice creation). */
  readonly legacyApi: boolean;
}

const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The version to serve: omitted → current; a valid date before the current version → that (legacy) date;
 * a later valid date → current. Returns null for anything that is not a real YYYY-MM-DD date.
 */
export function resolveApiVersion(header: string | undefined): { version: string; legacy: boolean } | null {
  if (header === undefined || header.trim() === '') return { version: CURRENT_API_VERSION, legacy: false };
  const value = header.trim();
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (match === null) return null;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return null;
  if (value < CURRENT_API_VERSION) return { version: value, legacy: true };
  return { version: CURRENT_API_VERSION, legacy: false };
}

export function contextOf(res: Response): RequestContext {
  return res.locals.context as RequestContext;
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (principal === undefined) throw new SpeechError('unauthenticated', 'authentication required');
  return principal;
}

/** Sets the context and the two headers every response carries; a bad Tts-Version answers 400. */
export function requestContext() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.get('x-request-id');
    const requestId = given !== undefined && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-ID', requestId);
    const resolved = resolveApiVersion(req.get('tts-version'));
    const context: RequestContext = {
      requestId,
      apiVersion: resolved?.version ?? CURRENT_API_VERSION,
      legacyApi: resolved?.legacy ?? false,
    };
    res.locals.context = context;
    res.setHeader('Tts-Version', context.apiVersion);
    if (resolved === null) {
      next(
        new SpeechError('validation_failed', 'Tts-Version must be a date in the form YYYY-MM-DD', {
          'Tts-Version': 'expected YYYY-MM-DD, e.g. 2026-09-13',
        }),
      );
      return;
    }
    next();
  };
}
