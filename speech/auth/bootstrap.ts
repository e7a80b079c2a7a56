// First start on an empty store: a `default` workspace with an owner and an all-scopes key (spec A.7 quick start).
import { createApiKeyRepository, createWorkspaceRepository, type Database } from '../store/index.js';
import { issueApiKey } from './key-issuer.js';
import { ALL_SCOPES } from './permissions.js';

export interface BootstrapResult {
  readonly workspaceId: string;
  readonly keyId: string;
  /** The owner key; the caller prints it once. */
  readonly key: string;
}

export const BOOTSTRAP_OWNER_EMAIL = 'owner@localhost';

/**
 * When the store has no workspace at all, creates workspace `default`, member owner@localhost (owner) and a key
 * with every scope, and returns them; otherwise returns null. Replicas starting together serialise on a lock,
 * so at most one of them creates anything.
 */
export async function bootstrapEmptyStore(db: Database): Promise<BootstrapResult | null> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(1667788659)');
    const existing = await tx.query('SELECT 1 FROM workspaces LIMIT 1');
    if (existing.length > 0) return null;
    const workspaces = createWorkspaceRepository(tx);
    const workspace = await workspaces.create('default');
    const owner = await workspaces.addMember(workspace.id, BOOTSTRAP_OWNER_EMAIL, 'owner');
    const issued = await issueApiKey(createApiKeyRepository(tx), workspace.id, { memberId: owner.id }, ALL_SCOPES);
    return { workspaceId: workspace.id, keyId: issued.record.id, key: issued.key };
  });
}
