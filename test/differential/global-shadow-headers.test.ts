// Differential: SHADOW_MODE (global) with RateLimit-* response headers under custom names.
import { expect } from 'chai';
import { startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, sameCounterDeltas, sameGrpc, sameGrpcRepeated, snapshotCounters } from './steps.js';

const RULES = `
domain: hdr
descriptors:
  - key: a
    rate_limit: { unit: hour, requests_per_unit: 3 }
  - key: b
    rate_limit: { unit: day, requests_per_unit: 5 }
  - key: s
    rate_limit: { unit: hour, requests_per_unit: 1 }
    shadow_mode: true
  - key: u
    rate_limit: { unlimited: true }
`;

const step = { resetHeader: 'X-Reset' };

describe('differential: global shadow mode and response headers', function () {
  this.timeout(60_000);
  let pair: ServicePair;

  before(async () => {
    pair = await startServicePair({
      files: { 'hdr.yaml': RULES },
      env: {
        SHADOW_MODE: 'true',
        LIMIT_RESPONSE_HEADERS_ENABLED: 'true',
        LIMIT_LIMIT_HEADER: 'X-Lim',
        LIMIT_REMAINING_HEADER: 'X-Rem',
        LIMIT_RESET_HEADER: 'X-Reset',
      },
    });
  });
  after(async () => {
    await pair?.stop();
  });

  it('headers follow the descriptor with the least remaining; global shadow turns OVER_LIMIT into OK', async () => {
    const before = await snapshotCounters(pair);
    const answers = await sameGrpcRepeated(
      pair,
      'a+b',
      request('hdr', [desc([['b', '1']]), desc([['a', '1']])]),
      5,
      step,
    );
    const last = answers[4];
    expect(last?.kind === 'response' && last.overallCode).to.equal('OK');
    expect(last?.kind === 'response' && last.statuses.map((s) => s.code)).to.deep.equal(['OK', 'OVER_LIMIT']);
    const deltas = await sameCounterDeltas(pair, 'global shadow', before, 'ratelimit.service.');
    expect(deltas['ratelimit.service.global_shadow_mode']).to.equal(2);
  });

  it('no headers for unlimited or unmatched descriptors only', async () => {
    await sameGrpc(pair, 'unlimited', request('hdr', [desc([['u', '1']])]), step);
    await sameGrpc(pair, 'no rule', request('hdr', [desc([['zz', '1']])]), step);
  });

  it('shadow-rule descriptors as header candidates', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpcRepeated(pair, 'shadow rule + a', request('hdr', [desc([['s', '1']]), desc([['a', '2']])]), 3, step);
    await sameGrpcRepeated(pair, 'shadow rule + b', request('hdr', [desc([['s', '2']]), desc([['b', '2']])]), 3, step);
    await sameGrpcRepeated(
      pair,
      'two over: the last wins',
      request('hdr', [desc([['b', '1']]), desc([['a', '1']]), desc([['s', '1']]), desc([['u', '1']])]),
      2,
      step,
    );
    await sameCounterDeltas(pair, 'candidates', before, 'ratelimit.service.');
  });
});
