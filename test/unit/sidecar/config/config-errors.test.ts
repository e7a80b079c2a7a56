import { expect } from 'chai';
import { ConfigError, loadRateLimitConfig, type ConfigSource } from '../../../../sidecar/config/index.js';
import { fixture } from './helpers.js';

function rejection(sources: ConfigSource[], mergeDomainConfig = false): ConfigError {
  try {
    loadRateLimitConfig(sources, { mergeDomainConfig });
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected the config to be rejected');
}

function inline(yaml: string, name = 'c.yaml'): ConfigSource[] {
  return [{ name, yaml }];
}

describe('loadRateLimitConfig validation (spec §2.15)', () => {
  const cases: [string, string, string][] = [
    ['bad_yaml.yaml', 'yaml_syntax', 'error loading config file: yaml: line 2: found unexpected end of stream'],
    ['non_string_key.yaml', 'non_string_key', 'config error, key is not of type string: 0.25'],
    ['misspelled_key.yaml', 'unknown_key', "config error, unknown key 'ratelimit'"],
    ['misspelled_key2.yaml', 'unknown_key', "config error, unknown key 'requestsperunit'"],
    ['non_map_list.yaml', 'non_map_list_item', 'config error, yaml file contains list of type other than map: a'],
    ['float_requests_per_unit.yaml', 'bad_value_type', 'error checking config'],
    [
      'negative_requests_per_unit.yaml',
      'decode_error',
      'error loading config file: yaml: unmarshal errors:\n  line 6: cannot unmarshal !!int `-1` into uint32',
    ],
    ['empty_domain.yaml', 'empty_domain', 'config file cannot have empty domain'],
    ['empty_key.yaml', 'empty_key', 'descriptor has empty key'],
    ['duplicate_key.yaml', 'duplicate_key', "duplicate descriptor composite key 'test-domain.key1_value1'"],
    ['bad_limit_unit.yaml', 'invalid_unit', "invalid rate limit unit 'foo'"],
    ['unlimited_with_unit.yaml', 'unlimited_with_unit', 'should not specify rate limit unit when unlimited'],
    ['replaces_empty.yaml', 'empty_replaces', 'should not have an empty replaces entry'],
    ['replaces_self.yaml', 'replaces_self', 'replaces should not contain name of same descriptor'],
    [
      'share_threshold_without_wildcard.yaml',
      'share_threshold_without_wildcard',
      "share_threshold can only be used with wildcard values (containing '*'), but found key 'files_readme'",
    ],
    ['bad_metadata.yaml', 'bad_metadata', 'error parsing metadata: proto: invalid map key 1: not a string'],
  ];
  for (const [file, code, detail] of cases) {
    it(`${file} → ${code}`, () => {
      const err = rejection([fixture(file)]);
      expect(err.code).to.equal(code);
      expect(err.file).to.equal(file);
      expect(err.message).to.equal(`${file}: ${detail}`);
    });
  }

  it('duplicate domain names the second file, and merging accepts it', () => {
    const err = rejection([fixture('basic_config.yaml'), fixture('duplicate_domain.yaml')]);
    expect(err.code).to.equal('duplicate_domain');
    expect(err.message).to.equal("duplicate_domain.yaml: duplicate domain 'test-domain' in config file");
    const merged = loadRateLimitConfig([fixture('merge_domain_key1.yaml'), fixture('merge_domain_key2.yaml')], {
      mergeDomainConfig: true,
    });
    expect(merged.domains).to.deep.equal(['test-domain']);
  });

  it('duplicate keys across merged files are still rejected', () => {
    const err = rejection([fixture('merge_domain_key1.yaml'), fixture('merge_domain_key1.yaml')], true);
    expect(err.code).to.equal('duplicate_key');
    expect(err.message).to.equal(
      "merge_domain_key1.yaml: duplicate descriptor composite key 'test-domain.key1_value1'",
    );
  });

  it('an empty or comment-only file has an empty domain', () => {
    expect(rejection(inline('')).code).to.equal('empty_domain');
    expect(rejection(inline('# nothing\n')).code).to.equal('empty_domain');
    expect(rejection(inline('~\n')).code).to.equal('empty_domain');
  });

  it('parses and checks every source before building any (a later YAML error beats an earlier empty domain)', () => {
    const err = rejection([fixture('empty_domain.yaml'), fixture('bad_yaml.yaml')]);
    expect(err.code).to.equal('yaml_syntax');
    expect(err.file).to.equal('bad_yaml.yaml');
  });

  it('checks a child before its duplicate sibling, as upstream', () => {
    const err = rejection(
      inline('domain: d\ndescriptors:\n  - key: a\n    descriptors:\n      - key: x\n      - key: x\n  - key: a\n'),
    );
    expect(err.message).to.equal("c.yaml: duplicate descriptor composite key 'd.a.x'");
  });

  it('checks unit and replaces before share_threshold, and the unit before replaces', () => {
    const st = 'domain: d\ndescriptors:\n  - key: a\n    share_threshold: true\n    rate_limit:\n      unit: foo\n';
    expect(rejection(inline(st)).code).to.equal('invalid_unit');
    const rep =
      'domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: x\n      replaces:\n        - name: ""\n';
    expect(rejection(inline(rep)).code).to.equal('invalid_unit');
  });

  it('treats the key and value composite as the duplicate identity (a_b/c collides with a/b_c)', () => {
    const err = rejection(inline('domain: d\ndescriptors:\n  - key: a\n    value: b_c\n  - key: a_b\n    value: c\n'));
    expect(err.message).to.equal("c.yaml: duplicate descriptor composite key 'd.a_b_c'");
  });

  describe('units', () => {
    it('accepts every unit in any case, including week/month/year', () => {
      for (const unit of ['second', 'MINUTE', 'Hour', 'dAy', 'week', 'Month', 'YEAR']) {
        const cfg = loadRateLimitConfig(
          inline(
            `domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: ${unit}\n      requests_per_unit: 1\n`,
          ),
          { mergeDomainConfig: false },
        );
        expect(cfg.dump()).to.contain(`unit=${unit.toUpperCase()} `);
      }
    });

    it("rejects a missing unit as '' and UNKNOWN as invalid", () => {
      expect(
        rejection(inline('domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      requests_per_unit: 1\n')).message,
      ).to.equal("c.yaml: invalid rate limit unit ''");
      expect(
        rejection(inline('domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: unknown\n')).message,
      ).to.equal("c.yaml: invalid rate limit unit 'unknown'");
    });

    it('allows unlimited with no, unknown or invalid unit', () => {
      const cfg = loadRateLimitConfig(
        inline(
          'domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unlimited: true\n  - key: b\n    rate_limit:\n      unlimited: true\n      unit: unknown\n  - key: c\n    rate_limit:\n      unlimited: yes\n      unit: foo\n',
        ),
        { mergeDomainConfig: false },
      );
      expect(cfg.dump()).to.equal(
        [
          'd.a: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false\n',
          'd.b: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false\n',
          'd.c: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false\n',
        ].join(''),
      );
    });
  });

  describe('requests_per_unit is a uint32 as yaml.v2 decodes it', () => {
    const rpu = (v: string): string =>
      `domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n      requests_per_unit: ${v}\n`;
    it('accepts 0, 2^32-1, hex, octal and underscores', () => {
      const dump = (v: string): string => loadRateLimitConfig(inline(rpu(v)), { mergeDomainConfig: false }).dump();
      expect(dump('4294967295')).to.contain('requests_per_unit=4294967295,');
      expect(dump('0x10')).to.contain('requests_per_unit=16,');
      expect(dump('010')).to.contain('requests_per_unit=8,');
      expect(dump('1_000')).to.contain('requests_per_unit=1000,');
      expect(dump('~')).to.contain('requests_per_unit=0,');
    });
    it('rejects negative, too large, string, bool and float values with upstream texts', () => {
      const detail = (v: string): string => {
        const err = rejection(inline(rpu(v)));
        return `${err.code}: ${err.detail}`;
      };
      const unmarshal = 'decode_error: error loading config file: yaml: unmarshal errors:\n  line 6: cannot unmarshal';
      expect(detail('4294967296')).to.equal(`${unmarshal} !!int \`4294967296\` into uint32`);
      expect(detail('"5"')).to.equal(`${unmarshal} !!str \`5\` into uint32`);
      expect(detail('yes')).to.equal(`${unmarshal} !!bool \`yes\` into uint32`);
      expect(detail('abcdefghijklmnop')).to.equal(`${unmarshal} !!str \`abcdefg...\` into uint32`);
      expect(detail('2001-12-14')).to.equal(`${unmarshal} !!timestamp \`2001-12-14\` into uint32`);
      expect(detail('1.5')).to.equal('bad_value_type: error checking config');
      expect(detail('1e3')).to.equal('bad_value_type: error checking config');
      expect(detail('18446744073709551615')).to.equal('bad_value_type: error checking config');
    });
  });

  describe('yaml.v2 compatibility', () => {
    it('reads yes/no/on/off/y/n as YAML 1.1 booleans but a quoted "true" is a string', () => {
      const cfg = loadRateLimitConfig(
        inline(
          'domain: d\ndescriptors:\n  - key: a\n    shadow_mode: on\n    quota_mode: Yes\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n',
        ),
        { mergeDomainConfig: false },
      );
      expect(cfg.dump()).to.equal('d.a: unit=SECOND requests_per_unit=1, shadow_mode: true, quota_mode: true\n');
      const err = rejection(
        inline('domain: d\ndescriptors:\n  - key: a\n    shadow_mode: "true"\n    detailed_metric: 1\n'),
      );
      expect(err.message).to.equal(
        'c.yaml: error loading config file: yaml: unmarshal errors:\n  line 4: cannot unmarshal !!str `true` into bool\n  line 5: cannot unmarshal !!int `1` into bool',
      );
    });

    it('keeps the source text of non-string scalars in string fields', () => {
      const cfg = loadRateLimitConfig(
        inline('domain: 123\ndescriptors:\n  - key: yes\n    value: 0x1F\n    rate_limit:\n      unit: second\n'),
        { mergeDomainConfig: false },
      );
      expect(cfg.domains).to.deep.equal(['123']);
      expect(cfg.dump()).to.contain('123.yes_0x1F: unit=SECOND');
    });

    it('accepts duplicate map keys, the last one winning', () => {
      const cfg = loadRateLimitConfig(
        inline('domain: x\ndomain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: foo\n      unit: hour\n'),
        { mergeDomainConfig: false },
      );
      expect(cfg.domains).to.deep.equal(['d']);
      // yaml.v2 still decodes the first value into the struct, so its type error is reported.
      const err = rejection(
        inline(
          'domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: hour\n      requests_per_unit: -1\n      requests_per_unit: 5\n',
        ),
      );
      expect(err.code).to.equal('decode_error');
    });

    it('expands anchors, aliases and merge keys', () => {
      const cfg = loadRateLimitConfig(
        inline(
          'domain: d\ndescriptors:\n  - key: a\n    rate_limit: &rl\n      unit: second\n      requests_per_unit: 5\n  - key: b\n    rate_limit: *rl\n  - key: c\n    rate_limit:\n      <<: *rl\n      requests_per_unit: 7\n',
        ),
        { mergeDomainConfig: false },
      );
      expect(cfg.dump()).to.equal(
        'd.a: unit=SECOND requests_per_unit=5, shadow_mode: false, quota_mode: false\n' +
          'd.b: unit=SECOND requests_per_unit=5, shadow_mode: false, quota_mode: false\n' +
          'd.c: unit=SECOND requests_per_unit=7, shadow_mode: false, quota_mode: false\n',
      );
      expect(rejection(inline('domain: d\ndescriptors:\n  - key: a\n    rate_limit: *nope\n')).message).to.equal(
        "c.yaml: error loading config file: yaml: unknown anchor 'nope' referenced",
      );
    });

    it('reads only the first document of a stream', () => {
      const cfg = loadRateLimitConfig(inline('domain: d\n---\ndomain: e\n  bad: [\n'), { mergeDomainConfig: false });
      expect(cfg.domains).to.deep.equal(['d']);
    });

    it('formats non-string keys and non-map list items like Go %v', () => {
      expect(rejection(inline('domain: d\n1000000.0: x\n')).detail).to.equal(
        'config error, key is not of type string: 1e+06',
      );
      expect(rejection(inline('domain: d\nyes: x\n')).detail).to.equal('config error, key is not of type string: true');
      expect(rejection(inline('domain: d\n~: x\n')).detail).to.equal('config error, key is not of type string: <nil>');
      expect(rejection(inline('domain: d\ndescriptors:\n  - [a, b]\n')).detail).to.equal(
        'config error, yaml file contains list of type other than map: [a b]',
      );
      expect(rejection(inline('domain: d\ndescriptors:\n  -\n')).detail).to.equal(
        'config error, yaml file contains list of type other than map: <nil>',
      );
    });

    it('rejects a top-level list or scalar like yaml.v2', () => {
      expect(rejection(inline('- a\n')).detail).to.equal(
        'error loading config file: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into map[interface {}]interface {}',
      );
    });

    it('gives libyaml wording for common syntax errors', () => {
      expect(rejection(inline('domain: d\ndescriptors:\n  - key: a: b\n')).detail).to.equal(
        'error loading config file: yaml: line 3: mapping values are not allowed in this context',
      );
      expect(rejection(inline('domain: d\ndescriptors:\n\t- key: a\n')).detail).to.equal(
        'error loading config file: yaml: line 3: found character that cannot start any token',
      );
      expect(rejection(inline('domain: d\ndescriptors: [\n')).detail).to.equal(
        'error loading config file: yaml: line 2: did not find expected node content',
      );
    });

    it('allows context-free keys (unit at the top) and does not validate inside metadata', () => {
      const cfg = loadRateLimitConfig(
        inline(
          'domain: d\nunit: x\ndescriptors:\n  - key: a\n    metadata:\n      anything: {goes: [1, 2.5, true, null]}\n    rate_limit:\n      unit: second\n',
        ),
        { mergeDomainConfig: false },
      );
      expect(cfg.domains).to.deep.equal(['d']);
    });
  });

  describe('document sources', () => {
    it('validates a document like a file (no line numbers in decode errors)', () => {
      const err = rejection([
        {
          name: 'xds-config',
          document: { domain: 'd', descriptors: [{ key: 'a', rate_limit: { unit: 'SECOND', requests_per_unit: -3 } }] },
        },
      ]);
      expect(err.code).to.equal('decode_error');
      expect(err.message).to.equal(
        'xds-config: error loading config file: yaml: unmarshal errors:\n  cannot unmarshal !!int `-3` into uint32',
      );
      expect(rejection([{ name: 'n', document: { domain: '', descriptors: [] } }]).code).to.equal('empty_domain');
      expect(rejection([{ name: 'n', document: { domain: 'd', extra: 1 } }]).code).to.equal('unknown_key');
    });
  });
});
