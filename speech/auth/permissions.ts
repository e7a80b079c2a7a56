// Who may do what: key scopes, member roles and the content.manage permission (spec A.1), as pure functions.
import type { MemberRole } from '../store/index.js';

export type Scope = 'audio' | 'voices' | 'voices:write';
export const ALL_SCOPES: readonly Scope[] = ['audio', 'voices', 'voices:write'];

/** A member role, or `service-account` for keys that act for no member (authorised by scopes alone). */
export type PrincipalRole = MemberRole | 'service-account';

export type Permission = 'content.manage';

/** The authenticated caller of one request. */
export interface Principal {
  readonly keyId: string;
  readonly workspaceId: string;
  readonly role: PrincipalRole;
  readonly scopes: ReadonlySet<Scope>;
}

/** What an operation needs: one scope and, optionally, a role permission. */
export interface Requirement {
  readonly scope: Scope;
  readonly permission?: Permission;
}

/** Every operation of the API and what it needs (spec A.1); routes look their requirement up here. */
export const OPERATION_REQUIREMENTS = {
  synthesize: { scope: 'audio' },
  'voices.read': { scope: 'voices' },
  'voices.delete': { scope: 'voices:write', permission: 'content.manage' },
  // For the voice-cloning routes (spec A.4, A.6): creating content needs the same as deleting it.
  'voices.create': { scope: 'voices:write', permission: 'content.manage' },
  'consent_challenges.create': { scope: 'voices:write', permission: 'content.manage' },
} as const satisfies Readonly<Record<string, Requirement>>;

export type Operation = keyof typeof OPERATION_REQUIREMENTS;

const ROLE_PERMISSIONS: Readonly<Record<MemberRole, readonly Permission[]>> = {
  owner: ['content.manage'],
  admin: ['content.manage'],
  member: ['content.manage'],
  viewer: [],
};

/** True when `role` holds `permission`; a service account holds every permission its scopes allow. */
export function roleHasPermission(role: PrincipalRole, permission: Permission): boolean {
  if (role === 'service-account') return true;
  return ROLE_PERMISSIONS[role].includes(permission);
}

/** The reason a principal may not perform an operation, or null when it may. */
export function deniedReason(principal: Principal, requirement: Requirement): string | null {
  if (!principal.scopes.has(requirement.scope)) return `the API key lacks the scope "${requirement.scope}"`;
  if (requirement.permission !== undefined && !roleHasPermission(principal.role, requirement.permission)) {
    return `the role "${principal.role}" lacks the permission "${requirement.permission}"`;
  }
  return null;
}

/** Parses a comma-separated scope list (CLI input); throws a RangeError naming the first unknown scope. */
export function parseScopes(text: string): Scope[] {
  const scopes = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (scopes.length === 0) throw new RangeError(`no scopes given; allowed: ${ALL_SCOPES.join(', ')}`);
  const out: Scope[] = [];
  for (const s of scopes) {
    const scope = ALL_SCOPES.find((a) => a === s);
    if (scope === undefined) throw new RangeError(`unknown scope "${s}"; allowed: ${ALL_SCOPES.join(', ')}`);
    if (!out.includes(scope)) out.push(scope);
  }
  return out;
}
