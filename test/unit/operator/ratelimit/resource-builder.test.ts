// CR spec → wire RateLimitConfig: field mapping, unit enum numbers, resource naming and content hashing.
import { expect } from 'chai';
import { buildXdsResource, canonicalJson } from '../../../../operator/ratelimit/resource-builder.js';
import type { DescriptorSpec } from '../../../../operator/crd/ratelimitconfig-types.js';
import { RateLimitConfig } from '../../../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';
import { RATE_LIMIT_CONFIG_TYPE_URL } from '../../../../operator/xds/type-urls.js';

function leaf(key: string, extra: Partial<DescriptorSpec> = {}): DescriptorSpec {
  return {
    key,
    value: '',
    rateLimit: { unit: 'week', requestsPerUnit: 4294967295, unlimited: false, name: 'n', replaces: [{ name: 'm' }] },
    shadowMode: true,
    detailedMetric: true,
    quotaMode: true,
    descriptors: [],
    ...extra,
  };
}

describe('resource builder', () => {
  it('maps every field, names the resource <namespace>/<name> and uses the RLC type URL', () => {
    const r = buildXdsResource('team-a', 'api', {
      domain: 'edge',
      descriptors: [{ ...leaf('outer'), rateLimit: undefined, descriptors: [leaf('inner', { metadata: { a: 1 } })] }],
    });
    expect(r.name).to.equal('team-a/api');
    expect(r.any.typeUrl).to.equal(RATE_LIMIT_CONFIG_TYPE_URL);
    const decoded = RateLimitConfig.decode(r.any.value);
    expect(decoded.name).to.equal('team-a/api');
    expect(decoded.domain).to.equal('edge');
    const inner = decoded.descriptors[0]?.descriptors[0];
    expect(decoded.descriptors[0]?.rateLimit).to.equal(undefined);
    expect(inner?.rateLimit?.unit, 'WEEK is 7 on the wire').to.equal(7);
    expect(inner?.rateLimit?.requestsPerUnit).to.equal(4294967295);
    expect(inner?.rateLimit?.replaces).to.deep.equal([{ name: 'm' }]);
    expect([inner?.shadowMode, inner?.detailedMetric, inner?.quotaMode]).to.deep.equal([true, true, true]);
    expect(inner?.metadata).to.deep.equal({ a: 1 });
  });

  it('hashes content canonically: metadata key order does not matter, values do', () => {
    const spec = (metadata: Record<string, unknown>) => ({ domain: 'd', descriptors: [leaf('k', { metadata })] });
    const a = buildXdsResource('ns', 'x', spec({ a: 1, b: 2 }));
    const b = buildXdsResource('ns', 'x', spec({ b: 2, a: 1 }));
    const c = buildXdsResource('ns', 'x', spec({ a: 1, b: 3 }));
    expect(a.contentHash).to.equal(b.contentHash);
    expect(a.contentHash).to.not.equal(c.contentHash);
    expect(canonicalJson({ b: [1, { d: null, c: 'x' }], a: undefined })).to.equal('{"b":[1,{"c":"x","d":null}]}');
  });
});
