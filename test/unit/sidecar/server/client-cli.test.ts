// The CLI client's Go-style flag parsing and upstream's output formats.
import { expect } from 'chai';
import { formatDescriptors, formatResponse, parseClientFlags, UsageError } from '../../../../sidecar/cli/client.js';

describe('chorus-ratelimit-client flags and output', () => {
  it('parses Go flag syntax with repeatable descriptors', () => {
    const flags = parseClientFlags([
      '-dial_string',
      'h:1',
      '--domain=d',
      '-descriptors',
      'a=b,c=d',
      '-descriptors=e=',
      '-grpc-use-tls',
    ]);
    expect(flags.dialString).to.equal('h:1');
    expect(flags.domain).to.equal('d');
    expect(flags.grpcUseTls).to.equal(true);
    expect(flags.descriptors.map((d) => d.entries)).to.deep.equal([
      [
        { key: 'a', value: 'b' },
        { key: 'c', value: 'd' },
      ],
      [{ key: 'e', value: '' }],
    ]);
    expect(parseClientFlags([]).dialString).to.equal('localhost:8081');
    expect(parseClientFlags(['-domain', 'x', 'rest', '-domain', 'y']).domain).to.equal('x');
  });

  it('refuses bad descriptors and unknown flags', () => {
    for (const args of [
      ['-descriptors', 'a'],
      ['-descriptors', 'a=b=c'],
      ['-descriptors', 'a=b,'],
      ['-nope'],
      ['-domain'],
      ['-grpc-use-tls=maybe'],
    ]) {
      expect(() => parseClientFlags(args), args.join(' ')).to.throw(UsageError);
    }
  });

  it('prints descriptors and responses as upstream', () => {
    expect(
      formatDescriptors(parseClientFlags(['-descriptors', 'a=b,c=d', '-descriptors', 'e=f']).descriptors),
    ).to.equal('[ <key=a, value=b>  <key=c, value=d> ] [ <key=e, value=f> ] ');
    expect(
      formatResponse({
        overallCode: 2,
        statuses: [
          {
            code: 2,
            currentLimit: { name: 'n"1', requestsPerUnit: 1, unit: 2 },
            limitRemaining: 0,
            durationUntilReset: { seconds: 42, nanos: 0 },
            quota: undefined,
          },
        ],
        responseHeadersToAdd: [{ key: 'RateLimit-Limit', value: '1', rawValue: Buffer.alloc(0) }],
        requestHeadersToAdd: [],
        rawBody: Buffer.alloc(0),
        dynamicMetadata: undefined,
        quota: undefined,
      }),
    ).to.equal(
      'overall_code:OVER_LIMIT statuses:{code:OVER_LIMIT current_limit:{name:"n\\"1" requests_per_unit:1 unit:MINUTE} ' +
        'duration_until_reset:{seconds:42}} response_headers_to_add:{key:"RateLimit-Limit" value:"1"}',
    );
  });
});
