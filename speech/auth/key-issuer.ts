// Creates API keys (admin CLI and first-start bootstrap): generates, stores the hash, returns the key once.
import type { ApiKeyRecord, ApiKeyRepository } from '../store/index.js';
import { generateApiKey } from './api-key.js';
import type { Scope } from './permissions.js';

export interface KeyHolder {
  /** Member the key acts for (its role applies); exactly one of memberId / serviceAccount. */
  readonly memberId?: string;
  /** Name of the service account the key acts as. */
  readonly serviceAccount?: string;
}

export interface IssuedKey {
  readonly record: ApiKeyRecord;
  /** The full key: the only time it exists outside the caller's hands. */
  readonly key: string;
}

export async function issueApiKey(
  keys: ApiKeyRepository,
  workspaceId: string,
  holder: KeyHolder,
  scopes: readonly Scope[],
): Promise<IssuedKey> {
  const generated = generateApiKey();
  const record = await keys.insert({
    workspaceId,
    memberId: holder.memberId ?? null,
    serviceAccount: holder.memberId === undefined ? (holder.serviceAccount ?? null) : null,
    prefix: generated.prefix,
    secretSha256: generated.sha256,
    scopes,
  });
  return { record, key: generated.key };
}
