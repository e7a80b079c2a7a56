// Cache keys (§2.1): window starts per unit, prefix, share_threshold patterns, empty values.
import { expect } from 'chai';
import { buildCacheKey, secondsUntilReset, windowStartSeconds } from '../../../../sidecar/limiter/cache-key.js';
import { descriptor, makeLimit } from '../../../support/rate-limit-fakes.js';

describe('cache-key', () => {
  it('embeds the SECOND window start (upstream domain_key_value_1234)', () => {
    const limit = makeLimit({ requestsPerUnit: 10, unit: 'SECOND' });
    expect(buildCacheKey('', 'domain', descriptor({ key: 'value' }), limit, 1234)).to.equal('domain_key_value_1234');
  });

  it('uses every entry and aligns MINUTE/HOUR/DAY windows to the epoch', () => {
    const d = descriptor({ key2: 'value2', subkey2: 'subvalue2' });
    expect(buildCacheKey('', 'domain', d, makeLimit({ requestsPerUnit: 1, unit: 'MINUTE' }), 1234)).to.equal(
      'domain_key2_value2_subkey2_subvalue2_1200',
    );
    const d3 = descriptor({ key3: 'value3' });
    expect(buildCacheKey('', 'domain', d3, makeLimit({ requestsPerUnit: 1, unit: 'HOUR' }), 1000000)).to.equal(
      'domain_key3_value3_997200',
    );
    expect(buildCacheKey('', 'domain', d3, makeLimit({ requestsPerUnit: 1, unit: 'DAY' }), 1000000)).to.equal(
      'domain_key3_value3_950400',
    );
  });

  it('prepends CACHE_KEY_PREFIX', () => {
    const limit = makeLimit({ requestsPerUnit: 10, unit: 'SECOND' });
    expect(buildCacheKey('prefix:', 'domain', descriptor({ key: 'value' }), limit, 1234)).to.equal(
      'prefix:domain_key_value_1234',
    );
  });

  it('replaces share_threshold values by the pattern, per index', () => {
    const one = makeLimit({ requestsPerUnit: 1, unit: 'SECOND', shareThresholdKeyPatterns: ['files/*'] });
    expect(buildCacheKey('', 'domain', descriptor({ files: 'files/a.txt' }), one, 1234)).to.equal(
      'domain_files_files/*_1234',
    );
    const two = makeLimit({ requestsPerUnit: 1, unit: 'SECOND', shareThresholdKeyPatterns: ['top/*', 'nested/*'] });
    expect(buildCacheKey('', 'domain', descriptor({ files: 'top/x', files2: 'nested/y' }), two, 1234)).to.equal(
      'domain_files_top/*_files2_nested/*_1234',
    );
    const second = makeLimit({ requestsPerUnit: 1, unit: 'SECOND', shareThresholdKeyPatterns: [undefined, 'n/*'] });
    expect(buildCacheKey('', 'd', descriptor({ a: 'x', b: 'n/1' }), second, 5)).to.equal('d_a_x_b_n/*_5');
  });

  it('keeps an empty value as k__ and gives "" without a limit', () => {
    const limit = makeLimit({ requestsPerUnit: 1, unit: 'SECOND' });
    expect(buildCacheKey('', 'd', descriptor({ k: '' }), limit, 7)).to.equal('d_k__7');
    expect(buildCacheKey('', 'd', descriptor({ k: 'v' }), undefined, 7)).to.equal('');
  });

  it('starts WEEK windows on Thursday and uses fixed 30/365-day MONTH/YEAR blocks', () => {
    // 1970-01-01 was a Thursday; 2026-11-22 12:00 UTC is a Sunday, its week started Thursday 2026-11-19.
    const now = Date.UTC(2026, 10, 22, 12) / 1000;
    expect(windowStartSeconds(now, 'WEEK')).to.equal(Date.UTC(2026, 10, 19) / 1000);
    expect(windowStartSeconds(now, 'MONTH') % 2592000).to.equal(0);
    expect(windowStartSeconds(now, 'YEAR') % 31536000).to.equal(0);
  });

  it('computes the reset as divider − now % divider', () => {
    expect(secondsUntilReset(2222, 'MINUTE')).to.equal(58);
    expect(secondsUntilReset(2220, 'MINUTE')).to.equal(60);
    expect(secondsUntilReset(1234, 'SECOND')).to.equal(1);
  });
});
