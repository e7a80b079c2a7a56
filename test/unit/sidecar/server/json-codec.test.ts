// The /json codec: strict proto3 JSON requests in, proto3 JSON responses out.
import { expect } from 'chai';
import { decodeJsonRequest, findDuplicateKey, JsonRequestError } from '../../../../sidecar/server/json-request.js';
import { durationToJson, encodeJsonResponse } from '../../../../sidecar/server/json-response.js';
import type {
  RateLimitResponse,
  RateLimitResponse_RateLimit_Unit,
} from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';

function response(partial: Partial<RateLimitResponse>): RateLimitResponse {
  return {
    overallCode: 0,
    statuses: [],
    responseHeadersToAdd: [],
    requestHeadersToAdd: [],
    rawBody: Buffer.alloc(0),
    dynamicMetadata: undefined,
    quota: undefined,
    ...partial,
  };
}

describe('/json request decoding', () => {
  it('accepts camelCase and original field names', () => {
    const camel = decodeJsonRequest(
      '{"domain":"d","hitsAddend":2,"descriptors":[{"entries":[{"key":"k","value":"v"}],' +
        '"limit":{"requestsPerUnit":5,"unit":"MINUTE"},"hitsAddend":"7"}]}',
    );
    const snake = decodeJsonRequest(
      '{"domain":"d","hits_addend":"2","descriptors":[{"entries":[{"key":"k","value":"v"}],' +
        '"limit":{"requests_per_unit":5,"unit":2},"hits_addend":7}]}',
    );
    const expected = {
      domain: 'd',
      hitsAddend: 2,
      descriptors: [{ entries: [{ key: 'k', value: 'v' }], limit: { requestsPerUnit: 5, unit: 2 }, hitsAddend: 7 }],
    };
    expect(camel).to.deep.equal(expected);
    expect(snake).to.deep.equal(expected);
  });

  it('fills defaults for missing and null fields, keeping hitsAddend 0 as present', () => {
    expect(decodeJsonRequest('{}')).to.deep.equal({ domain: '', descriptors: [], hitsAddend: 0 });
    expect(decodeJsonRequest('{"domain":null,"descriptors":[{"entries":[{"key":"k"}],"hitsAddend":0}]}')).to.deep.equal(
      {
        domain: '',
        descriptors: [{ entries: [{ key: 'k', value: '' }], limit: undefined, hitsAddend: 0 }],
        hitsAddend: 0,
      },
    );
    expect(decodeJsonRequest('{"descriptors":[{"hitsAddend":null}]}').descriptors[0]?.hitsAddend).to.equal(undefined);
    expect(
      decodeJsonRequest('{"descriptors":[{"limit":{"unit":1e0,"requestsPerUnit":"1e2"}}]}').descriptors[0]?.limit,
    ).to.deep.equal({ requestsPerUnit: 100, unit: 1 });
  });

  it('refuses garbage bodies', () => {
    const bad = [
      '',
      '   ',
      'not json',
      '{"domain":"d"',
      '[]',
      'null',
      '"x"',
      '{"domain":"d","extra":1}',
      '{"domain":5}',
      '{"domain":"d","descriptors":{}}',
      '{"descriptors":[{"entries":[{"key":"k","value":1}]}]}',
      '{"descriptors":[{"entries":[{"key":"k","nope":"v"}]}]}',
      '{"descriptors":[1]}',
      '{"hitsAddend":-1}',
      '{"hitsAddend":1.5}',
      '{"hitsAddend":4294967296}',
      '{"hitsAddend":" 1"}',
      '{"hitsAddend":"01"}',
      '{"hitsAddend":"0x10"}',
      '{"hitsAddend":"1."}',
      '{"hitsAddend":true}',
      '{"hitsAddend":1,"hits_addend":1}',
      '{"descriptors":[{"limit":{"unit":"FORTNIGHT"}}]}',
      '{"descriptors":[{"limit":{"unit":true}}]}',
      '{"descriptors":[{"hitsAddend":"x"}]}',
    ];
    for (const body of bad) expect(() => decodeJsonRequest(body), body).to.throw(JsonRequestError);
  });
});

describe('/json response encoding', () => {
  it('writes proto3 JSON with zero values omitted and enums by name', () => {
    const text = encodeJsonResponse(
      response({
        overallCode: 2,
        statuses: [
          {
            code: 2,
            currentLimit: { name: '', requestsPerUnit: 1, unit: 2 },
            limitRemaining: 0,
            durationUntilReset: { seconds: 42, nanos: 0 },
            quota: undefined,
          },
          {
            code: 1,
            currentLimit: { name: 'n', requestsPerUnit: 0, unit: 9 as RateLimitResponse_RateLimit_Unit },
            limitRemaining: 4294967295,
            durationUntilReset: undefined,
            quota: undefined,
          },
          { code: 1, currentLimit: undefined, limitRemaining: 0, durationUntilReset: undefined, quota: undefined },
        ],
        responseHeadersToAdd: [{ key: 'RateLimit-Limit', value: '1', rawValue: Buffer.alloc(0) }],
      }),
    );
    expect(text).to.equal(
      '{"overallCode":"OVER_LIMIT","statuses":[' +
        '{"code":"OVER_LIMIT","currentLimit":{"requestsPerUnit":1,"unit":"MINUTE"},"durationUntilReset":"42s"},' +
        '{"code":"OK","currentLimit":{"name":"n","unit":9},"limitRemaining":4294967295},' +
        '{"code":"OK"}],' +
        '"responseHeadersToAdd":[{"key":"RateLimit-Limit","value":"1"}]}',
    );
    expect(encodeJsonResponse(response({}))).to.equal('{}');
    expect(encodeJsonResponse(response({ dynamicMetadata: { a: { b: 1 } } }))).to.equal(
      '{"dynamicMetadata":{"a":{"b":1}}}',
    );
  });

  it('writes durations as protojson does', () => {
    expect(durationToJson({ seconds: 0, nanos: 0 })).to.equal('0s');
    expect(durationToJson({ seconds: 1, nanos: 500_000_000 })).to.equal('1.500s');
    expect(durationToJson({ seconds: 1, nanos: 1000 })).to.equal('1.000001s');
    expect(durationToJson({ seconds: 0, nanos: 5 })).to.equal('0.000000005s');
    expect(durationToJson({ seconds: -1, nanos: -500_000_000 })).to.equal('-1.500s');
  });
});

describe('/json request edge cases shared with protojson', () => {
  it('refuses duplicate member names anywhere, also when JSON.parse would keep the last', () => {
    expect(() => decodeJsonRequest('{"domain":"x","domain":"test"}')).to.throw(
      JsonRequestError,
      'duplicate field "domain"',
    );
    expect(() => decodeJsonRequest('{"descriptors":[{"entries":[{"key":"a","key":"b"}]}]}')).to.throw(JsonRequestError);
    expect(() => decodeJsonRequest('{"d\\u006fmain":"x","domain":"y"}')).to.throw(JsonRequestError);
    expect(findDuplicateKey('{"a":{"b":1},"b":[{"a":1},{"a":2}],"s":"\\"a\\":"}')).to.equal(undefined);
  });

  it('accepts the whole uint64 range for a descriptor hitsAddend and nothing beyond', () => {
    const max = decodeJsonRequest('{"descriptors":[{"hitsAddend":"18446744073709551615"}]}');
    expect(max.descriptors[0]?.hitsAddend).to.equal(2 ** 64);
    expect(() => decodeJsonRequest('{"descriptors":[{"hitsAddend":"18446744073709551616"}]}')).to.throw(
      JsonRequestError,
    );
    expect(() => decodeJsonRequest('{"hitsAddend":"4294967296"}')).to.throw(JsonRequestError);
  });
});
