import { expect } from 'chai';
import { ServiceError } from '../../../../sidecar/errors.js';
import { loadRateLimitConfig } from '../../../../sidecar/config/index.js';
import { desc, fixture, loadYaml, withOverride } from './helpers.js';

describe('RateLimitConfig.getLimit (spec §2.12)', () => {
  const basic = loadRateLimitConfig([fixture('basic_config.yaml')], { mergeDomainConfig: false });
  const wild = loadRateLimitConfig([fixture('wildcard.yaml')], { mergeDomainConfig: false });

  it('returns undefined for an unknown domain (even with an override) and reports domains', () => {
    expect(basic.getLimit('foo_domain', desc('key2=x'))).to.equal(undefined);
    expect(basic.getLimit('foo_domain', withOverride(desc('key2=x'), 5, 1))).to.equal(undefined);
    expect(basic.hasDomain('foo_domain')).to.equal(false);
    expect(basic.hasDomain('test-domain')).to.equal(true);
    expect(basic.domains).to.deep.equal(['test-domain']);
  });

  it('returns undefined for a descriptor without entries', () => {
    expect(basic.getLimit('test-domain', desc())).to.equal(undefined);
  });

  it('prefers the exact key_value rule, then falls back to the key-only rule', () => {
    const exact = basic.getLimit('test-domain', desc('key2=value2'))!;
    expect([exact.requestsPerUnit, exact.unit, exact.fullKey]).to.deep.equal([30, 'MINUTE', 'test-domain.key2_value2']);
    const fallback = basic.getLimit('test-domain', desc('key2=something'))!;
    expect([fallback.requestsPerUnit, fallback.unit, fallback.fullKey]).to.deep.equal([
      20,
      'MINUTE',
      'test-domain.key2',
    ]);
    expect(basic.getLimit('test-domain', desc('key2=value3'))!.requestsPerUnit).to.equal(20);
  });

  it('matches nested rules and the key-only default at the second level', () => {
    const sub = basic.getLimit('test-domain', desc('key1=value1', 'subkey1=something'))!;
    expect([sub.requestsPerUnit, sub.unit, sub.fullKey]).to.deep.equal([
      5,
      'SECOND',
      'test-domain.key1_value1.subkey1',
    ]);
    const exact = basic.getLimit('test-domain', desc('key1=value1', 'subkey1=subvalue1'))!;
    expect([exact.requestsPerUnit, exact.fullKey]).to.deep.equal([10, 'test-domain.key1_value1.subkey1_subvalue1']);
  });

  it('applies the depth rule: the request must end exactly where the limit sits', () => {
    expect(basic.getLimit('test-domain', desc('key1=value1'))).to.equal(undefined);
    expect(basic.getLimit('test-domain', desc('key1=something'))).to.equal(undefined);
    expect(basic.getLimit('test-domain', desc('key2=value2', 'extra=x'))).to.equal(undefined);
    expect(basic.getLimit('test-domain', desc('key1=value1', 'subkey1=x', 'extra=y'))).to.equal(undefined);
  });

  it('knows every unit and unlimited limits', () => {
    const unit = (k: string): string => basic.getLimit('test-domain', desc(`${k}=x`))!.unit;
    expect(['key3', 'key4', 'key5', 'key6', 'key7'].map(unit)).to.deep.equal(['HOUR', 'DAY', 'WEEK', 'MONTH', 'YEAR']);
    const unlimited = basic.getLimit('test-domain', desc('key8=unlimited'))!;
    expect(unlimited.unlimited).to.equal(true);
  });

  it('treats a node with neither limit nor children as a whitelist (undefined)', () => {
    expect(basic.getLimit('test-domain', desc('whitelisted=anything'))).to.equal(undefined);
  });

  it('returns the same immutable object for repeated plain matches (no allocation)', () => {
    const a = basic.getLimit('test-domain', desc('key2=a'));
    const b = basic.getLimit('test-domain', desc('key2=b'));
    expect(a).to.equal(b);
    expect(a!.isOverride).to.equal(false);
    expect(a!.shareThresholdKeyPatterns).to.equal(undefined);
  });

  describe('wildcards', () => {
    const rpu = (...pairs: string[]): number | undefined =>
      wild.getLimit('test-domain', desc(...pairs))?.requestsPerUnit;

    it('tries wildcard patterns in config order after the exact lookup', () => {
      expect(rpu('wild=foo123')).to.equal(20);
      expect(rpu('wild=foo')).to.equal(20);
      expect(rpu('wild=fo1')).to.equal(99);
      expect(rpu('wild=bar')).to.equal(undefined);
      expect(wild.getLimit('test-domain', desc('wild=foo123'))!.fullKey).to.equal('test-domain.wild_foo*');
    });

    it('does not treat a value without * as a pattern', () => {
      expect(rpu('noWild=foo')).to.equal(21);
      expect(rpu('noWild=foo1')).to.equal(undefined);
    });

    it('matches * in the middle with zero or more characters, prefix and suffix anchored', () => {
      expect(rpu('midWild=barxyzb')).to.equal(22);
      expect(rpu('midWild=barb')).to.equal(22);
      expect(rpu('midWild=bar')).to.equal(undefined);
      expect(rpu('midWild=barbx')).to.equal(undefined);
    });

    it('matches several * segments in order, else falls back to the key-only rule', () => {
      expect(rpu('path=/api/v1/users/42/avatar')).to.equal(23);
      expect(rpu('path=/api//users//avatar')).to.equal(23);
      expect(rpu('path=/api/v1/users/42/other')).to.equal(24);
      expect(rpu('path=/api/users/avatar')).to.equal(24);
    });

    it('never backtracks: a matched wildcard node without a limit here blocks the key-only sibling', () => {
      expect(rpu('nested=abc', 'child=x')).to.equal(25);
      expect(rpu('nested=abc')).to.equal(undefined);
      expect(rpu('nested=zzz')).to.equal(26);
    });
  });

  it('never backtracks from an exact node without children to the key-only node with children', () => {
    const cfg = loadYaml(
      'domain: d\ndescriptors:\n  - key: a\n    value: b\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n  - key: a\n    descriptors:\n      - key: c\n        rate_limit:\n          unit: second\n          requests_per_unit: 2\n',
    );
    expect(cfg.getLimit('d', desc('a=b', 'c=x'))).to.equal(undefined);
    expect(cfg.getLimit('d', desc('a=z', 'c=x'))!.requestsPerUnit).to.equal(2);
  });

  it('keeps the composite-key quirk: key a_b (key-only) matches key a with value b', () => {
    const cfg = loadYaml(
      'domain: d\ndescriptors:\n  - key: a_b\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n',
    );
    expect(cfg.getLimit('d', desc('a=b'))!.fullKey).to.equal('d.a_b');
  });

  it('merges descriptors of several files of one domain', () => {
    const cfg = loadRateLimitConfig([fixture('merge_domain_key1.yaml'), fixture('merge_domain_key2.yaml')], {
      mergeDomainConfig: true,
    });
    expect(cfg.getLimit('test-domain', desc('key1=value1'))!.requestsPerUnit).to.equal(5);
    expect(cfg.getLimit('test-domain', desc('key2=value2'))!.requestsPerUnit).to.equal(10);
  });

  it('carries name, replaces, shadow and quota mode and metadata from the rule', () => {
    const cfg = loadYaml(
      'domain: d\ndescriptors:\n  - key: a\n    shadow_mode: true\n    quota_mode: true\n    metadata:\n      owner: team-a\n      limits: {burst: 2}\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n      name: a-limit\n      replaces:\n        - name: b-limit\n',
    );
    const limit = cfg.getLimit('d', desc('a=1'))!;
    expect(limit).to.deep.include({ name: 'a-limit', shadowMode: true, quotaMode: true, unlimited: false });
    expect(limit.replaces).to.deep.equal(['b-limit']);
    expect(limit.metadata).to.deep.equal({ owner: 'team-a', limits: { burst: 2 } });
  });

  describe('overrides (descriptor.limit)', () => {
    it('returns a fresh limit with the override stats key, even without a matching rule', () => {
      const limit = basic.getLimit('test-domain', withOverride(desc('key1=value1', 'subkey1=something'), 42, 3))!;
      expect(limit).to.deep.equal({
        fullKey: 'test-domain.key1_value1.subkey1_something',
        requestsPerUnit: 42,
        unit: 'HOUR',
        name: '',
        unlimited: false,
        shadowMode: false,
        quotaMode: false,
        replaces: [],
        metadata: undefined,
        shareThresholdKeyPatterns: undefined,
        isOverride: true,
      });
      expect(basic.getLimit('test-domain', withOverride(desc('nomatch', 'x=y'), 1, 7))!.fullKey).to.equal(
        'test-domain.nomatch.x_y',
      );
      expect(basic.getLimit('test-domain', withOverride(desc('key2=value2'), 1, 1))!.unit).to.equal('SECOND');
    });

    it('throws ServiceError invalid_override for UNKNOWN or undefined units instead of crashing', () => {
      for (const unit of [0, 8, -1]) {
        expect(() => basic.getLimit('test-domain', withOverride(desc('key2=value2'), 1, unit)))
          .to.throw(ServiceError)
          .with.property('code', 'invalid_override');
      }
    });
  });

  it('dumps one sorted line per limit', () => {
    const cfg = loadRateLimitConfig([fixture('merge_domain_key1.yaml'), fixture('merge_domain_key2.yaml')], {
      mergeDomainConfig: true,
    });
    expect(cfg.dump()).to.equal(
      'test-domain.key1_value1: unit=SECOND requests_per_unit=5, shadow_mode: false, quota_mode: false\n' +
        'test-domain.key2_value2: unit=MINUTE requests_per_unit=10, shadow_mode: false, quota_mode: false\n',
    );
  });
});
