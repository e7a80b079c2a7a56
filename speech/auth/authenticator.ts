// Turns an Authorization header into the Principal of the request, or says why it cannot.
import type { ApiKeyRepository } from '../store/index.js';
import { apiKeyMatches, apiKeyPrefix } from './api-key.js';
import { ALL_SCOPES, type Principal, type Scope } from './permissions.js';

/** Why authentication failed; every kind answers the client with the same 401 `unauthenticated`. */
export type AuthFailure = 'missing' | 'malformed' | 'unknown_key' | 'revoked';

export type AuthResult =
  { readonly ok: true; readonly principal: Principal } | { readonly ok: false; readonly failure: AuthFailure };

export interface Authenticator {
  /** Checks `Authorization: Bearer <key>`; store faults throw StoreError. */
  authenticate(authorizationHeader: string | undefined): Promise<AuthResult>;
}

export function createAuthenticator(keys: ApiKeyRepository): Authenticator {
  return {
    async authenticate(header) {
      if (header === undefined || header.trim() === '') return { ok: false, failure: 'missing' };
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
      if (match === null) return { ok: false, failure: 'malformed' };
      const key = match[1] ?? '';
      const prefix = apiKeyPrefix(key);
      if (prefix === null) return { ok: false, failure: 'malformed' };
      const record = await keys.findByPrefix(prefix);
      if (record === null || !apiKeyMatches(key, record.secretSha256)) return { ok: false, failure: 'unknown_key' };
      if (record.revokedAt !== null) return { ok: false, failure: 'revoked' };
      const scopes = new Set<Scope>(ALL_SCOPES.filter((s) => record.scopes.includes(s)));
      const role = record.memberRole ?? 'service-account';
      return { ok: true, principal: { keyId: record.id, workspaceId: record.workspaceId, role, scopes } };
    },
  };
}
