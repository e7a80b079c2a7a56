import { expect } from 'chai';
import { RateLimitUnit } from '../../../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';
import type {
  RateLimitConfig as XdsConfig,
  RateLimitDescriptor as XdsDescriptor,
} from '../../../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';
import { ConfigError, loadRateLimitConfig, xdsConfigToSource } from '../../../../sidecar/config/index.js';
import { desc } from './helpers.js';

function descriptor(fields: Partial<XdsDescriptor>): XdsDescriptor {
  return {
    key: '',
    value: '',
    rateLimit: undefined,
    descriptors: [],
    shadowMode: false,
    detailedMetric: false,
    quotaMode: false,
    metadata: undefined,
    ...fields,
  };
}

function policy(unit: number, requestsPerUnit: number, extra: { unlimited?: boolean; name?: string } = {}) {
  return { unit, requestsPerUnit, unlimited: extra.unlimited ?? false, name: extra.name ?? '', replaces: [] };
}

describe('xdsConfigToSource (upstream config_xds.go)', () => {
  it('converts the proto into a document that loads like the equivalent YAML', () => {
    const config: XdsConfig = {
      name: 'ns/limits',
      domain: 'edge',
      descriptors: [
        descriptor({
          key: 'tenant',
          descriptors: [
            descriptor({
              key: 'path',
              value: '/api/*',
              shadowMode: true,
              quotaMode: true,
              detailedMetric: true,
              metadata: { team: 'a', nested: { n: 1 } },
              rateLimit: { ...policy(RateLimitUnit.WEEK, 9, { name: 'api' }), replaces: [{ name: 'old' }] },
            }),
          ],
        }),
      ],
    };
    const source = xdsConfigToSource(config);
    expect(source.name).to.equal('ns/limits');
    const cfg = loadRateLimitConfig([source], { mergeDomainConfig: false });
    const limit = cfg.getLimit('edge', desc('tenant=t1', 'path=/api/x'))!;
    expect(limit).to.deep.include({
      fullKey: 'edge.tenant_t1.path_/api/x',
      requestsPerUnit: 9,
      unit: 'WEEK',
      name: 'api',
      shadowMode: true,
      quotaMode: true,
    });
    expect(limit.replaces).to.deep.equal(['old']);
    expect(limit.metadata).to.deep.equal({ team: 'a', nested: { n: 1 } });
  });

  it('treats UNKNOWN like an empty unit and an undefined enum number as invalid, named after the config', () => {
    const unlimited = xdsConfigToSource({
      name: 'c1',
      domain: 'd',
      descriptors: [descriptor({ key: 'a', rateLimit: policy(RateLimitUnit.UNKNOWN, 0, { unlimited: true }) })],
    });
    expect(
      loadRateLimitConfig([unlimited], { mergeDomainConfig: false }).getLimit('d', desc('a=1'))!.unlimited,
    ).to.equal(true);
    const unknown = xdsConfigToSource({
      name: 'c2',
      domain: 'd',
      descriptors: [descriptor({ key: 'a', rateLimit: policy(RateLimitUnit.UNKNOWN, 5) })],
    });
    expect(() => loadRateLimitConfig([unknown], { mergeDomainConfig: false }))
      .to.throw(ConfigError, "c2: invalid rate limit unit 'UNKNOWN'")
      .with.property('code', 'invalid_unit');
    const undefinedEnum = xdsConfigToSource({
      name: 'c3',
      domain: 'd',
      descriptors: [descriptor({ key: 'a', rateLimit: policy(12, 5) })],
    });
    expect(() => loadRateLimitConfig([undefinedEnum], { mergeDomainConfig: false })).to.throw(
      ConfigError,
      "c3: invalid rate limit unit '12'",
    );
  });

  it('reports semantic errors of several configs like files (duplicate domain names the second)', () => {
    const a = xdsConfigToSource({ name: 'a', domain: 'd', descriptors: [] });
    const b = xdsConfigToSource({ name: 'b', domain: 'd', descriptors: [] });
    expect(() => loadRateLimitConfig([a, b], { mergeDomainConfig: false })).to.throw(
      ConfigError,
      "b: duplicate domain 'd' in config file",
    );
    const empty = xdsConfigToSource({ name: 'e', domain: 'd', descriptors: [descriptor({ key: '' })] });
    expect(() => loadRateLimitConfig([empty], { mergeDomainConfig: false })).to.throw(
      ConfigError,
      'e: descriptor has empty key',
    );
  });
});
