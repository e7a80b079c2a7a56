import { expect } from 'chai';
import { loadRateLimitConfig, sanitizeStatsKey } from '../../../../sidecar/config/index.js';
import { desc, fixture } from './helpers.js';

describe('stats keys of matches (spec §2.13) and share_threshold patterns (spec §2.1)', () => {
  const share = loadRateLimitConfig([fixture('share_threshold.yaml')], { mergeDomainConfig: false });
  const vtm = loadRateLimitConfig([fixture('value_to_metric.yaml')], { mergeDomainConfig: false });
  const limitOf = (cfg: typeof share, domain: string, ...pairs: string[]) => cfg.getLimit(domain, desc(...pairs))!;

  describe('share_threshold', () => {
    it('uses the pattern in the stats key and for the cache key of that entry', () => {
      const l = limitOf(share, 'test-domain', 'files=files/a.txt');
      expect([l.requestsPerUnit, l.fullKey]).to.deep.equal([100, 'test-domain.files_files/*']);
      expect(l.shareThresholdKeyPatterns).to.deep.equal(['files/*']);
    });

    it('tracks patterns per entry index in nested rules', () => {
      const nested = limitOf(share, 'test-domain', 'nested=parent', 'files=nested/x');
      expect(nested.fullKey).to.equal('test-domain.nested_parent.files_nested/*');
      expect(nested.shareThresholdKeyPatterns).to.deep.equal([undefined, 'nested/*']);
      const both = limitOf(share, 'test-domain', 'files=top/1', 'files=nested/2');
      expect(both.fullKey).to.equal('test-domain.files_top/*.files_nested/*');
      expect(both.shareThresholdKeyPatterns).to.deep.equal(['top/*', 'nested/*']);
    });

    it('takes priority over value_to_metric (pattern with *)', () => {
      const l = limitOf(share, 'test-domain', 'route=api/v1', 'method=GET');
      expect(l.fullKey).to.equal('test-domain.route_api/*.method');
      expect(l.shareThresholdKeyPatterns).to.deep.equal(['api/*', undefined]);
    });

    it('keeps the pattern in a detailed_metric key', () => {
      expect(limitOf(share, 'test-domain', 'service=svc/a', 'endpoint=get').fullKey).to.equal(
        'test-domain.service_svc/*.endpoint_get',
      );
      expect(limitOf(share, 'test-domain', 'service=svc/a', 'endpoint=').fullKey).to.equal(
        'test-domain.service_svc/*.endpoint',
      );
    });

    it('lets an explicit value win over a share_threshold wildcard', () => {
      const exact = limitOf(share, 'test-domain', 'file=test1');
      expect([exact.requestsPerUnit, exact.fullKey, exact.shareThresholdKeyPatterns]).to.deep.equal([
        50,
        'test-domain.file_test1',
        undefined,
      ]);
      const shared = limitOf(share, 'test-domain', 'file=test2');
      expect([shared.requestsPerUnit, shared.fullKey]).to.deep.equal([100, 'test-domain.file_test*']);
    });

    it('works with * in the middle', () => {
      const l = limitOf(share, 'test-domain', 'mid=a/x/b/y');
      expect([l.fullKey, l.shareThresholdKeyPatterns]).to.deep.equal(['test-domain.mid_a/*/b/*', ['a/*/b/*']]);
    });
  });

  describe('value_to_metric', () => {
    it('puts runtime values of flagged key-only nodes into the key', () => {
      expect(limitOf(vtm, 'domain', 'route=draw', 'http_method=GET', 'subject_id=123').fullKey).to.equal(
        'domain.route_draw.http_method_GET.subject_id',
      );
      expect(limitOf(vtm, 'domain', 'k1=X', 'k2=Y', 'k3=Z').fullKey).to.equal('domain.k1.k2_Y.k3');
    });

    it('uses the plain key for an empty value', () => {
      expect(limitOf(vtm, 'domain', 'k1=X', 'k2=', 'k3=Z').fullKey).to.equal('domain.k1.k2.k3');
    });

    it('uses the runtime value on a wildcard node and keeps explicit values', () => {
      expect(limitOf(vtm, 'domain', 'wild=prefix1').fullKey).to.equal('domain.wild_prefix1');
      expect(limitOf(vtm, 'domain', 'exact=v').fullKey).to.equal('domain.exact_v');
    });

    it('returns the configured path without value_to_metric', () => {
      expect(limitOf(vtm, 'domain', 'parent_detailed=p', 'leaf=l').fullKey).to.equal('domain.parent_detailed.leaf');
    });
  });

  describe('detailed_metric', () => {
    it('on the leaf puts every runtime value into the key (an empty value gives k_)', () => {
      expect(limitOf(vtm, 'domain', 'detailed=a', 'leaf=b').fullKey).to.equal('domain.detailed_a.leaf_b');
      expect(limitOf(vtm, 'domain', 'detailed=a', 'leaf=').fullKey).to.equal('domain.detailed_a.leaf_');
    });

    it('overrides value_to_metric, and a parent flag has no effect', () => {
      expect(limitOf(vtm, 'domain', 'both=x', 'leaf=y').fullKey).to.equal('domain.both_x.leaf_y');
      expect(limitOf(vtm, 'domain', 'parent_detailed=p', 'leaf=l').fullKey).to.equal('domain.parent_detailed.leaf');
    });

    it('keeps the rule metadata (deliberate difference: upstream drops it here)', () => {
      expect(limitOf(vtm, 'domain', 'detailed=a', 'leaf=b').metadata).to.deep.equal({ tier: 'gold' });
    });
  });

  it('does not sanitise keys, but exports the sanitiser for the stats layer', () => {
    const cfg = loadRateLimitConfig(
      [
        {
          name: 'c',
          yaml: 'domain: d\ndescriptors:\n  - key: ip\n    detailed_metric: true\n    rate_limit:\n      unit: second\n',
        },
      ],
      { mergeDomainConfig: false },
    );
    expect(cfg.getLimit('d', desc('ip=10.0.0.5:80|x'))!.fullKey).to.equal('d.ip_10.0.0.5:80|x');
    expect(sanitizeStatsKey('d.ip_10.0.0.5:80|x')).to.equal('d.ip_10_0_0_5_80_x');
    expect(sanitizeStatsKey('d.v_1.2.3')).to.equal('d.v_1.2.3');
    expect(sanitizeStatsKey('d.a_1.2.3.4.5.6.7.8')).to.equal('d.a_1_2_3_4.5_6_7_8');
  });
});
