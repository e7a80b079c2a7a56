// API key format, hashing and the permission rules (pure).
import { expect } from 'chai';
import {
  apiKeyMatches,
  apiKeyPrefix,
  deniedReason,
  generateApiKey,
  hashApiKey,
  parseScopes,
  roleHasPermission,
  type Principal,
} from '../../../../speech/auth/index.js';

describe('speech auth: API keys', () => {
  it('generates distinct keys whose prefix is recoverable and whose hash is stored', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.key).to.match(/^chs_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/);
    expect(a.key).not.to.equal(b.key);
    expect(apiKeyPrefix(a.key)).to.equal(a.prefix);
    expect(a.sha256)
      .to.equal(hashApiKey(a.key))
      .and.match(/^[0-9a-f]{64}$/);
    expect(apiKeyMatches(a.key, a.sha256)).to.equal(true);
    expect(apiKeyMatches(b.key, a.sha256)).to.equal(false);
    expect(apiKeyMatches(a.key, 'abc')).to.equal(false);
  });

  it('rejects strings that cannot be keys', () => {
    for (const s of [
      '',
      'chs_',
      'chs_ABCDEFGHIJKL_' + 'a'.repeat(43),
      'chs_abcdefghijkl_short',
      'sk_abcdefghijkl_' + 'a'.repeat(43),
    ]) {
      expect(apiKeyPrefix(s), s).to.equal(null);
    }
  });
});

describe('speech auth: permissions', () => {
  const principal = (
    role: Principal['role'],
    scopes: Principal['scopes'] extends ReadonlySet<infer S> ? S[] : never,
  ): Principal => ({
    keyId: 'k',
    workspaceId: 'w',
    role,
    scopes: new Set(scopes),
  });

  it('gives content.manage to owner, admin, member and service accounts, never to viewer', () => {
    expect(
      ['owner', 'admin', 'member', 'service-account'].every((r) =>
        roleHasPermission(r as Principal['role'], 'content.manage'),
      ),
    ).to.equal(true);
    expect(roleHasPermission('viewer', 'content.manage')).to.equal(false);
  });

  it('needs the scope and, where asked, the permission', () => {
    const del = { scope: 'voices:write', permission: 'content.manage' } as const;
    expect(deniedReason(principal('member', ['voices:write']), del)).to.equal(null);
    expect(deniedReason(principal('viewer', ['voices:write']), del)).to.contain('content.manage');
    expect(deniedReason(principal('owner', ['voices']), del)).to.contain('voices:write');
    expect(deniedReason(principal('service-account', ['voices:write']), del)).to.equal(null);
    expect(deniedReason(principal('viewer', ['audio']), { scope: 'audio' })).to.equal(null);
  });

  it('parses scope lists strictly', () => {
    expect(parseScopes('audio, voices,voices:write,audio')).to.deep.equal(['audio', 'voices', 'voices:write']);
    expect(() => parseScopes('audio,admin')).to.throw(RangeError, 'unknown scope "admin"');
    expect(() => parseScopes(' , ')).to.throw(RangeError);
  });
});
