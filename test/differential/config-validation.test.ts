// Differential: rule files both services must reject (old config kept), and a bad initial config.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { diffTarget, startServicePair, type DiffService, type ServicePair } from './service-pair.js';
import { desc, request, sameGrpc } from './steps.js';

const GOOD = `
domain: cfg
descriptors:
  - key: k
    rate_limit: { unit: hour, requests_per_unit: 100 }
`;

/** One bad file per validation rule of spec §2.15 (the same cases as upstream's test/config fixtures). */
const BAD_FILES: ReadonlyArray<readonly [string, string]> = [
  ['YAML syntax', 'domain: [unclosed\n'],
  ['non-string key', 'domain: b\ndescriptors:\n  - key: a\n    0.25: x\n'],
  ['unknown key', 'domain: b\ndescriptors:\n  - key: a\n    ratelimit: { unit: hour, requests_per_unit: 1 }\n'],
  [
    'misspelled nested key',
    'domain: b\ndescriptors:\n  - key: a\n    rate_limit: { unit: hour, requestsperunit: 1 }\n',
  ],
  ['list item not a map', 'domain: b\ndescriptors:\n  - a\n'],
  [
    'float requests_per_unit',
    'domain: b\ndescriptors:\n  - key: a\n    rate_limit: { unit: hour, requests_per_unit: 1.5 }\n',
  ],
  [
    'negative requests_per_unit',
    'domain: b\ndescriptors:\n  - key: a\n    rate_limit: { unit: hour, requests_per_unit: -1 }\n',
  ],
  ['empty domain', 'domain: ""\ndescriptors:\n  - key: a\n'],
  ['empty file', ''],
  [
    'duplicate domain',
    'domain: cfg\ndescriptors:\n  - key: other\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n',
  ],
  [
    'descriptor without key',
    'domain: b\ndescriptors:\n  - value: a\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n',
  ],
  [
    'duplicate descriptor',
    'domain: b\ndescriptors:\n  - key: a\n    value: v\n  - key: a\n    value: v\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n',
  ],
  ['invalid unit', 'domain: b\ndescriptors:\n  - key: a\n    rate_limit: { unit: fortnight, requests_per_unit: 1 }\n'],
  ['missing unit', 'domain: b\ndescriptors:\n  - key: a\n    rate_limit: { requests_per_unit: 1 }\n'],
  ['unlimited with a unit', 'domain: b\ndescriptors:\n  - key: a\n    rate_limit: { unlimited: true, unit: hour }\n'],
  [
    'empty replaces entry',
    'domain: b\ndescriptors:\n  - key: a\n    rate_limit: { unit: hour, requests_per_unit: 1, replaces: [{ name: "" }] }\n',
  ],
  [
    'replaces itself',
    'domain: b\ndescriptors:\n  - key: a\n    rate_limit: { unit: hour, requests_per_unit: 1, name: n, replaces: [{ name: n }] }\n',
  ],
  [
    'share_threshold without a wildcard',
    'domain: b\ndescriptors:\n  - key: a\n    value: v\n    share_threshold: true\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n',
  ],
];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function counter(service: DiffService, name: string): Promise<number> {
  return (await service.counters()).get(name) ?? 0;
}

/** Waits until `name` on `service` exceeds `baseline`; fails with the service log after timeoutMs. */
async function waitForIncrease(
  service: DiffService,
  name: string,
  baseline: number,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await counter(service, name)) <= baseline) {
    if (Date.now() > deadline) {
      throw new Error(
        `${service.label}: ${name} stayed at ${baseline} for ${timeoutMs} ms:\n${service.output().slice(-3000)}`,
      );
    }
    await sleep(100);
  }
}

/**
 * Upstream's reason for the last rejected load of `file`, from its logrus line
 * `msg="Error loading new configuration: <file>: <reason>"`.
 */
function upstreamReason(output: string, file: string): string {
  const marker = `Error loading new configuration: ${file}: `;
  const line = output
    .split('\n')
    .filter((l) => l.includes(marker))
    .pop();
  if (line === undefined) throw new Error(`upstream logged no load error for ${file}`);
  const start = line.indexOf(marker) + marker.length;
  return line.slice(start, line.lastIndexOf('"')).replace(/\\"/g, '"');
}

/**
 * The part of a reason both must share. Go's YAML parser words its own errors (line numbers, "unmarshal errors"),
 * so for those only the prefix the service adds is compared.
 */
function sharedReason(reason: string): string {
  const yamlError = /^(error loading config file: )yaml: /.exec(reason);
  return yamlError === null ? reason : (yamlError[1] ?? reason);
}

const ERROR = 'ratelimit.service.config_load_error';
const SUCCESS = 'ratelimit.service.config_load_success';

describe('differential: config validation', function () {
  this.timeout(120_000);

  describe('reloads with a bad file', () => {
    let pair: ServicePair;
    let configDir: string;

    before(async () => {
      pair = await startServicePair({ files: { 'good.yaml': GOOD } });
      configDir = path.join(pair.runtimeRoot, 'ratelimit', 'config');
    });
    after(async () => {
      await pair?.stop();
    });

    for (const [label, text] of BAD_FILES) {
      it(`both reject: ${label}; the old rules stay active`, async () => {
        const services = [pair.upstream, pair.ours];
        const errorsBefore = await Promise.all(services.map((s) => counter(s, ERROR)));
        // Rename into place so the watchers see one complete file.
        const staged = path.join(pair.runtimeRoot, 'staged.yaml');
        writeFileSync(staged, text);
        renameSync(staged, path.join(configDir, 'zz-bad.yaml'));
        await Promise.all(services.map((s, i) => waitForIncrease(s, ERROR, errorsBefore[i] ?? 0)));
        let reason = sharedReason(upstreamReason(pair.upstream.output(), 'zz-bad.yaml'));
        // The snapshot only knows trailing wildcards; the spec (§2.15 row 15) words this error for `*` anywhere.
        if (diffTarget() === 'chorus') reason = reason.replace("(ending with '*')", "(containing '*')");
        expect(pair.ours.output(), `ours logs the rejection of zz-bad.yaml like upstream`).to.include(
          `zz-bad.yaml: ${reason}`,
        );
        await sameGrpc(pair, `${label}: old rules`, request('cfg', [desc([['k', label]])]));
        await sameGrpc(pair, `${label}: new domain not loaded`, request('b', [desc([['a', 'v']])]));

        const successBefore = await Promise.all(services.map((s) => counter(s, SUCCESS)));
        rmSync(path.join(configDir, 'zz-bad.yaml'));
        await Promise.all(services.map((s, i) => waitForIncrease(s, SUCCESS, successBefore[i] ?? 0)));
      });
    }

    it('a good new file is picked up by both', async () => {
      const services = [pair.upstream, pair.ours];
      const successBefore = await Promise.all(services.map((s) => counter(s, SUCCESS)));
      const staged = path.join(pair.runtimeRoot, 'staged.yaml');
      writeFileSync(
        staged,
        'domain: b\ndescriptors:\n  - key: a\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n',
      );
      renameSync(staged, path.join(configDir, 'b.yaml'));
      await Promise.all(services.map((s, i) => waitForIncrease(s, SUCCESS, successBefore[i] ?? 0)));
      const answers = [];
      for (let i = 0; i < 2; i++) answers.push(await sameGrpc(pair, 'new domain', request('b', [desc([['a', 'v']])])));
      expect(answers[1]).to.deep.include({ overallCode: 'OVER_LIMIT' });
    });
  });

  describe('a bad initial config', () => {
    let pair: ServicePair;

    before(async () => {
      pair = await startServicePair({
        files: { 'bad.yaml': 'domain: b\ndescriptors:\n  - key: a\n    rate_limit: { unit: fortnight }\n' },
      });
    });
    after(async () => {
      await pair?.stop();
    });

    it('both start, stay healthy and answer "no rate limit configuration loaded"', async () => {
      const answer = await sameGrpc(pair, 'no config', request('b', [desc([['a', 'v']])]), { expectError: true });
      expect(answer).to.deep.equal({ kind: 'error', code: 2, message: 'no rate limit configuration loaded' });
    });
  });
});
