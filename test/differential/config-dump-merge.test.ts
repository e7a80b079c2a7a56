// Differential: the debug /rlconfig dump, and MERGE_DOMAIN_CONFIG merging one domain from several files.
import { expect } from 'chai';
import { httpCall } from './rls-client.js';
import { startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, sameGrpc, sameGrpcRepeated } from './steps.js';

const FILE_A = `
domain: merged
descriptors:
  - key: a
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: s
    value: x
    shadow_mode: true
    rate_limit: { unit: day, requests_per_unit: 3 }
  - key: u
    rate_limit: { unlimited: true }
`;

const FILE_B = `
domain: merged
descriptors:
  - key: b
    descriptors:
      - key: c
        rate_limit: { unit: minute, requests_per_unit: 4, name: bc }
  - key: q
    quota_mode: true
    rate_limit: { unit: week, requests_per_unit: 5 }
`;

const FILE_OTHER = `
domain: other
descriptors:
  - key: a
    rate_limit: { unit: second, requests_per_unit: 1 }
`;

/** /rlconfig lines in a stable order: upstream walks Go maps, so its order is random. */
async function dumpLines(debugUrl: string): Promise<string[]> {
  const answer = await httpCall(debugUrl, '/rlconfig', undefined, 'GET');
  expect(answer.status).to.equal(200);
  return answer.text
    .split('\n')
    .filter((l) => l !== '')
    .sort();
}

describe('differential: /rlconfig and MERGE_DOMAIN_CONFIG', function () {
  this.timeout(60_000);
  let pair: ServicePair;

  before(async () => {
    pair = await startServicePair({
      files: { 'a.yaml': FILE_A, 'b.yaml': FILE_B, 'other.yaml': FILE_OTHER },
      env: { MERGE_DOMAIN_CONFIG: 'true' },
    });
  });
  after(async () => {
    await pair?.stop();
  });

  it('both files of a domain are merged', async () => {
    await sameGrpcRepeated(pair, 'from a.yaml', request('merged', [desc([['a', '1']])]), 3);
    // The week rule of b.yaml (its minute rule is only dumped: a minute window could turn between two calls).
    await sameGrpc(pair, 'from b.yaml', request('merged', [desc([['q', '1']])]));
    await sameGrpc(pair, 'other domain', request('other', [desc([['a', '1']])]));
  });

  it('/rlconfig lists every limit with unit, requests_per_unit, shadow_mode and quota_mode', async () => {
    const up = await dumpLines(pair.upstream.debugUrl);
    const ours = await dumpLines(pair.ours.debugUrl);
    expect(up.length).to.be.greaterThan(3);
    expect(ours).to.deep.equal(up);
  });
});
