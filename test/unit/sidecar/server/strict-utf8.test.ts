// The byte-level UTF-8 check of RateLimitRequest strings.
import { expect } from 'chai';
import { RateLimitRequest } from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { checkRateLimitRequestUtf8, WireFormatError } from '../../../../sidecar/server/strict-utf8.js';

describe('strict UTF-8 check of RateLimitRequest bytes', () => {
  it('accepts valid requests, including a real U+FFFD and other fields', () => {
    const bytes = RateLimitRequest.encode({
      domain: 'dömain\uFFFD',
      descriptors: [{ entries: [{ key: 'k', value: '✓' }], limit: { requestsPerUnit: 5, unit: 2 }, hitsAddend: 3 }],
      hitsAddend: 2,
    }).finish();
    expect(() => checkRateLimitRequestUtf8(bytes)).to.not.throw();
  });

  it('refuses invalid UTF-8 in the domain, a key or a value', () => {
    const bad = Buffer.from([0xc3, 0x28]);
    const domain = Buffer.concat([Buffer.from([0x0a, 0x02]), bad]);
    const entry = Buffer.concat([Buffer.from([0x12, 0x02]), bad]); // Entry.value
    const descriptor = Buffer.concat([Buffer.from([0x0a, entry.length]), entry]); // Descriptor.entries
    const request = Buffer.concat([Buffer.from([0x12, descriptor.length]), descriptor]); // Request.descriptors
    expect(() => checkRateLimitRequestUtf8(domain)).to.throw(WireFormatError, 'invalid UTF-8');
    expect(() => checkRateLimitRequestUtf8(request)).to.throw(WireFormatError, 'invalid UTF-8');
    expect(() => checkRateLimitRequestUtf8(Buffer.from([0x0a, 0x05, 0x61]))).to.throw(WireFormatError);
  });
});
