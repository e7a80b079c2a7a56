// Strict JSON request bodies: media type, size and syntax checked once; field checking helpers for the parsers.
import express, { type NextFunction, type Request, type Response } from 'express';
import { SpeechError, validationError } from './speech-error.js';

/** Largest JSON body accepted (20,000 code points of input fit comfortably, even fully escaped). */
export const MAX_JSON_BODY_BYTES = 512 * 1024;

/** Parses application/json bodies; another media type → 415, bad JSON → 400, too large → 413. */
export function jsonBody() {
  const parse = express.json({ limit: MAX_JSON_BODY_BYTES, strict: true, type: () => true });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!req.is('application/json')) {
      next(new SpeechError('unsupported_media_type', 'the request body must be application/json'));
      return;
    }
    parse(req, res, next);
  };
}

export type JsonObject = Readonly<Record<string, unknown>>;

/** The body as an object whose keys are all in `allowed`; any other key is a 400 naming each unknown field. */
export function strictObject(value: unknown, allowed: readonly string[], path = ''): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw validationError({ [path === '' ? 'body' : path]: 'must be a JSON object' });
  }
  const unknown = Object.keys(value).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    const fields: Record<string, string> = {};
    for (const key of unknown) fields[path === '' ? key : `${path}.${key}`] = 'unknown field';
    throw validationError(fields, `unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
  }
  return value as JsonObject;
}

/** Collects field errors so that one response reports every bad field. */
export class FieldErrors {
  private readonly errors: Record<string, string> = {};

  add(field: string, message: string): void {
    this.errors[field] ??= message;
  }

  /** Throws `validation_failed` if any error was added. */
  throwIfAny(): void {
    if (Object.keys(this.errors).length > 0) throw validationError(this.errors);
  }

  /** A string field, or undefined when absent (null counts as absent). */
  optionalString(body: JsonObject, field: string): string | undefined {
    const value = body[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') {
      this.add(field, 'must be a string');
      return undefined;
    }
    return value;
  }

  requiredString(body: JsonObject, field: string): string | undefined {
    const value = this.optionalString(body, field);
    if (value === undefined && !(field in this.errors)) this.add(field, 'is required');
    return value;
  }

  optionalBoolean(body: JsonObject, field: string, path: string): boolean | undefined {
    const value = body[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') {
      this.add(path, 'must be true or false');
      return undefined;
    }
    return value;
  }
}

/** Number of Unicode code points (what the input limits count). */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}
