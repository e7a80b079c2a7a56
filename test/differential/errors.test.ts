// Differential: bad requests over gRPC and /json, /json answers, /healthcheck and unknown HTTP paths.
import { expect } from 'chai';
import { startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, sameCounterDeltas, sameGrpc, sameHttp, snapshotCounters } from './steps.js';

const RULES = `
domain: err
descriptors:
  - key: k
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: u
    rate_limit: { unlimited: true }
`;

describe('differential: request errors, /json and /healthcheck', function () {
  this.timeout(60_000);
  let pair: ServicePair;

  before(async () => {
    pair = await startServicePair({ files: { 'err.yaml': RULES } });
  });
  after(async () => {
    await pair?.stop();
  });

  it('gRPC: empty domain and empty descriptor list are errors with the same code and message', async () => {
    const before = await snapshotCounters(pair);
    const noDomain = await sameGrpc(pair, 'empty domain', request('', [desc([['k', 'v']])]), { expectError: true });
    expect(noDomain).to.deep.equal({ kind: 'error', code: 2, message: 'rate limit domain must not be empty' });
    await sameGrpc(pair, 'no descriptors', request('err', []), { expectError: true });
    await sameGrpc(pair, 'both empty', request('', []), { expectError: true });
    await sameCounterDeltas(pair, 'service errors', before, 'ratelimit.service.call.');
  });

  it('/json: OK is 200, over the limit is 429, unlimited shows the max remaining', async () => {
    const body = JSON.stringify({ domain: 'err', descriptors: [{ entries: [{ key: 'k', value: 'json' }] }] });
    const first = (await sameHttp(pair, 'json OK', '/json', body)) as { status: number };
    expect(first.status).to.equal(200);
    const second = (await sameHttp(pair, 'json over', '/json', body)) as { status: number };
    expect(second.status).to.equal(429);
    await sameHttp(pair, 'json PUT', '/json', body, 'PUT');
    await sameHttp(
      pair,
      'json unlimited + unknown rule',
      '/json',
      JSON.stringify({
        domain: 'err',
        descriptors: [{ entries: [{ key: 'u', value: 'x' }] }, { entries: [{ key: 'n' }] }],
      }),
    );
    await sameHttp(
      pair,
      'json snake_case fields and string hits_addend',
      '/json',
      JSON.stringify({ domain: 'err', hits_addend: '2', descriptors: [{ entries: [{ key: 'k', value: 'snake' }] }] }),
    );
    await sameHttp(
      pair,
      'json per-descriptor hitsAddend 0',
      '/json',
      JSON.stringify({ domain: 'err', descriptors: [{ entries: [{ key: 'k', value: 'zero' }], hitsAddend: 0 }] }),
    );
  });

  it('/json: overrides, null fields and number forms', async () => {
    const statuses: number[] = [];
    for (const [label, body] of [
      [
        'override with enum name',
        {
          domain: 'err',
          descriptors: [{ entries: [{ key: 'o', value: '1' }], limit: { requestsPerUnit: 3, unit: 'DAY' } }],
        },
      ],
      [
        'override with enum number and string count',
        {
          domain: 'err',
          descriptors: [{ entries: [{ key: 'o', value: '2' }], limit: { requests_per_unit: '3', unit: 4 } }],
        },
      ],
      ['null descriptors', { domain: 'err', descriptors: null }],
      [
        'hits as string in wrapper',
        { domain: 'err', descriptors: [{ entries: [{ key: 'k', value: 'w' }], hitsAddend: '0' }] },
      ],
      ['exponent hits', { domain: 'err', hitsAddend: 2, descriptors: [{ entries: [{ key: 'k', value: 'e' }] }] }],
    ] as const) {
      const answer = (await sameHttp(pair, label, '/json', JSON.stringify(body))) as { status: number };
      statuses.push(answer.status);
    }
    // Every form parses; null descriptors is an empty list (a service error), 2 hits exceed the limit of 1.
    expect(statuses).to.deep.equal([200, 200, 400, 200, 429]);
  });

  it('/json: bad bodies and service errors are 400 Bad Request', async () => {
    for (const [label, body] of [
      ['empty body', ''],
      ['not JSON', '{'],
      ['unknown field', JSON.stringify({ domain: 'err', nope: 1 })],
      ['wrong type', JSON.stringify({ domain: 5 })],
      ['empty domain', JSON.stringify({ domain: '', descriptors: [{ entries: [{ key: 'k', value: 'v' }] }] })],
      ['no descriptors', JSON.stringify({ domain: 'err' })],
      ['array body', '[]'],
      ['null domain', JSON.stringify({ domain: null, descriptors: [{ entries: [{ key: 'k', value: 'v' }] }] })],
      [
        'unknown enum',
        JSON.stringify({ domain: 'err', descriptors: [{ entries: [{ key: 'k' }], limit: { unit: 'FOO' } }] }),
      ],
      ['unknown nested field', JSON.stringify({ domain: 'err', descriptors: [{ entries: [{ key: 'k', nope: 1 }] }] })],
      ['negative hits', JSON.stringify({ domain: 'err', hitsAddend: -1, descriptors: [{ entries: [{ key: 'k' }] }] })],
      [
        'fractional hits',
        JSON.stringify({ domain: 'err', hitsAddend: 1.5, descriptors: [{ entries: [{ key: 'k' }] }] }),
      ],
    ] as const) {
      const answer = (await sameHttp(pair, label, '/json', body)) as { status: number };
      expect(answer.status, label).to.equal(400);
    }
  });

  it('/healthcheck answers 200 OK; unknown paths are 404', async () => {
    const health = await sameHttp(pair, 'healthcheck', '/healthcheck', undefined, 'GET');
    expect(health).to.deep.equal({ status: 200, contentType: 'text/plain', body: 'OK' });
    await sameHttp(pair, 'unknown path', '/nope', undefined, 'GET');
  });
});
