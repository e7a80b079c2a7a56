// Interop: upstream's own client (ratelimit-client) and grpcurl against ours, answers compared with upstream's.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { requireTool } from '../support/upstream-ratelimit.js';
import { expectSame } from './compare.js';
import { startServicePair, type ServicePair } from './service-pair.js';

const PROTO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../proto');
const RLS_METHOD = 'envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

const RULES = `
domain: interop
descriptors:
  - key: k
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: a
    descriptors:
      - key: c
        rate_limit: { unit: day, requests_per_unit: 5, name: nested }
`;

interface Run {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, [...args], { timeout: 15_000 }, (err, stdout, stderr) => {
      const exitCode = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ exitCode, stdout, stderr });
    });
  });
}

/**
 * The part of ratelimit-client's output that depends on the server: the `response:` or `request error:` line, with
 * prototext's randomised spacing removed and reset seconds pulled out for a tolerant comparison.
 */
function clientAnswer(result: Run): { exitCode: number; answer: string; resetSeconds: number[] } {
  const line =
    `${result.stdout}\n${result.stderr}`
      .split('\n')
      .find((l) => l.startsWith('response:') || l.startsWith('request error:')) ?? '';
  const canonical = line
    .replace(/\s*:\s*/g, ':')
    .replace(/\s+/g, ' ')
    .trim();
  const resetSeconds = [...canonical.matchAll(/duration_until_reset:\{seconds:(\d+)\}/g)].map((m) => Number(m[1]));
  return {
    exitCode: result.exitCode,
    answer: canonical.replace(/duration_until_reset:\{seconds:\d+\}/g, 'duration_until_reset:{…}'),
    resetSeconds,
  };
}

function grpcurlArgs(address: string, protoFile: string, method: string, body: string): string[] {
  return [
    '-plaintext',
    '-import-path',
    PROTO_DIR,
    '-import-path',
    '/usr/include',
    '-proto',
    protoFile,
    '-d',
    body,
    address,
    method,
  ];
}

function grpcurlAnswer(result: Run): unknown {
  if (result.exitCode !== 0)
    return { exitCode: result.exitCode, stdout: result.stdout.trim(), stderr: result.stderr.trim() };
  return { exitCode: 0, json: JSON.parse(result.stdout) as unknown };
}

describe('interop: ratelimit-client and grpcurl against ours', function () {
  this.timeout(60_000);
  let pair: ServicePair;
  let client: string;
  let grpcurl: string;

  before(async () => {
    client = requireTool('ratelimit-client');
    grpcurl = requireTool('grpcurl');
    pair = await startServicePair({ files: { 'interop.yaml': RULES } });
  });
  after(async () => {
    await pair?.stop();
  });

  async function sameClientRun(label: string, args: readonly string[]): Promise<ReturnType<typeof clientAnswer>> {
    const up = clientAnswer(await run(client, ['-dial_string', pair.upstream.grpcAddress, ...args]));
    const ours = clientAnswer(await run(client, ['-dial_string', pair.ours.grpcAddress, ...args]));
    expectSame(
      label,
      { ...up, resetSeconds: up.resetSeconds.map(() => 0) },
      { ...ours, resetSeconds: ours.resetSeconds.map(() => 0) },
    );
    ours.resetSeconds.forEach((s, i) =>
      expect(Math.abs(s - (up.resetSeconds[i] ?? -99)), `${label} reset`).to.be.at.most(1),
    );
    return up;
  }

  it('ratelimit-client: one and several descriptors, then over the limit', async () => {
    const first = await sameClientRun('client, k=v', ['-domain', 'interop', '-descriptors', 'k=v']);
    expect(first.exitCode).to.equal(0);
    expect(first.answer).to.include('overall_code:OK');
    await sameClientRun('client, two descriptors', [
      '-domain',
      'interop',
      '-descriptors',
      'k=v',
      '-descriptors',
      'a=b,c=d',
    ]);
    const over = await sameClientRun('client, over', ['-domain', 'interop', '-descriptors', 'k=v']);
    expect(over.answer).to.include('overall_code:OVER_LIMIT');
  });

  it('ratelimit-client: an empty domain is a request error (exit 1)', async () => {
    const answer = await sameClientRun('client, empty domain', ['-domain', '', '-descriptors', 'k=v']);
    expect(answer.exitCode).to.equal(1);
    expect(answer.answer).to.include('rate limit domain must not be empty');
  });

  it('grpcurl with our protos: ShouldRateLimit, errors and the ratelimit health service', async () => {
    const cases: ReadonlyArray<readonly [string, string, string, string]> = [
      [
        'rls',
        'envoy/service/ratelimit/v3/rls.proto',
        RLS_METHOD,
        '{"domain":"interop","descriptors":[{"entries":[{"key":"k","value":"g"}]}]}',
      ],
      [
        'rls hits_addend',
        'envoy/service/ratelimit/v3/rls.proto',
        RLS_METHOD,
        '{"domain":"interop","hitsAddend":3,"descriptors":[{"entries":[{"key":"a","value":"x"},{"key":"c","value":"y"}]}]}',
      ],
      ['rls empty domain', 'envoy/service/ratelimit/v3/rls.proto', RLS_METHOD, '{"domain":""}'],
      ['health ratelimit', 'grpc/health/v1/health.proto', 'grpc.health.v1.Health/Check', '{"service":"ratelimit"}'],
      ['health default', 'grpc/health/v1/health.proto', 'grpc.health.v1.Health/Check', '{}'],
    ];
    for (const [label, protoFile, method, body] of cases) {
      const up = grpcurlAnswer(await run(grpcurl, grpcurlArgs(pair.upstream.grpcAddress, protoFile, method, body)));
      const ours = grpcurlAnswer(await run(grpcurl, grpcurlArgs(pair.ours.grpcAddress, protoFile, method, body)));
      expectSame(`grpcurl ${label}`, up, ours);
    }
  });
});
