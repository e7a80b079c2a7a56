// The operator checks each CR with the sidecar's own loader and reports the sidecar's message.
import { expect } from 'chai';
import { buildXdsResource } from '../../../../operator/ratelimit/resource-builder.js';
import { sidecarLoadCheck } from '../../../../operator/ratelimit/sidecar-load-check.js';

const base = { value: '', shadowMode: false, detailedMetric: false, quotaMode: false, descriptors: [] };

describe('sidecar load check', () => {
  it('passes a spec the sidecar loads', () => {
    const r = buildXdsResource('a', 'ok', {
      domain: 'd',
      descriptors: [
        { ...base, key: 'k', rateLimit: { unit: 'week', requestsPerUnit: 3, unlimited: false, replaces: [] } },
      ],
    });
    expect(sidecarLoadCheck(r)).to.equal(undefined);
  });

  it('returns the sidecar message, prefixed with the resource name, for what the sidecar NACKs', () => {
    const r = buildXdsResource('a', 'bad', {
      domain: 'd',
      descriptors: [{ ...base, key: 'k', rateLimit: { requestsPerUnit: 3, unlimited: false, replaces: [] } }],
    });
    expect(sidecarLoadCheck(r)).to.match(/^a\/bad: .*invalid rate limit unit/);
    const dup = buildXdsResource('a', 'dup', {
      domain: 'd',
      descriptors: [
        { ...base, key: 'a_b', rateLimit: { unit: 'second', requestsPerUnit: 1, unlimited: false, replaces: [] } },
        {
          ...base,
          key: 'a',
          value: 'b',
          rateLimit: { unit: 'second', requestsPerUnit: 1, unlimited: false, replaces: [] },
        },
      ],
    });
    expect(sidecarLoadCheck(dup)).to.match(/^a\/dup: .*duplicate/);
  });
});
