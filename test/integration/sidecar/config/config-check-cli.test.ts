import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES } from '../../../unit/sidecar/config/helpers.js';

const REPO = join(import.meta.dirname, '../../../..');

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI as users do in development: `npx tsx sidecar/cli/config-check.ts …`. */
function runCli(...args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile('npx', ['tsx', 'sidecar/cli/config-check.ts', ...args], { cwd: REPO }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') {
        reject(error);
        return;
      }
      // npx itself may warn about the local npm config; that is not the CLI's output.
      const cliStderr = stderr
        .split('\n')
        .filter((line) => !line.startsWith('npm warn'))
        .join('\n');
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr: cliStderr });
    });
  });
}

describe('chorus-ratelimit-config-check CLI', function () {
  this.timeout(60000);
  let tmp: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'chorus-config-check-'));
  });

  after(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  async function dirWith(name: string, files: string[]): Promise<string> {
    const dir = join(tmp, name);
    await mkdir(dir, { recursive: true });
    for (const file of files) await copyFile(join(FIXTURES, file), join(dir, file));
    return dir;
  }

  it('prints upstream lines and exits 0 when every file loads (sub-directories are skipped)', async () => {
    const dir = await dirWith('good', ['basic_config.yaml']);
    await writeFile(join(dir, 'other.yaml'), 'domain: other\n');
    await mkdir(join(dir, 'subdir'));
    await writeFile(join(dir, 'subdir', 'ignored.yaml'), 'not: [valid');
    const result = await runCli('-config_dir', dir);
    expect(result).to.deep.equal({
      code: 0,
      stdout: [
        'checking rate limit configs...',
        `loading config directory: ${dir}`,
        `opening config file: ${dir}/basic_config.yaml`,
        `opening config file: ${dir}/other.yaml`,
        'all rate limit configs ok',
        '',
      ].join('\n'),
      stderr: '',
    });
  });

  it('exits 1 with the error line on a duplicate domain, and merges with -merge_domain_configs', async () => {
    const dir = await dirWith('merge', ['merge_domain_key1.yaml', 'merge_domain_key2.yaml']);
    const strict = await runCli(`--config_dir=${dir}`, '-merge_domain_configs=false');
    expect(strict.code).to.equal(1);
    expect(strict.stdout.trimEnd().split('\n').at(-1)).to.equal(
      `error loading rate limit configs: ${dir}/merge_domain_key2.yaml: duplicate domain 'test-domain' in config file`,
    );
    const merged = await runCli('-merge_domain_configs', '-config_dir', dir);
    expect(merged.code).to.equal(0);
    expect(merged.stdout).to.contain('all rate limit configs ok\n');
  });

  it('exits 1 (upstream panics with 2) on a YAML error, stopping at the failing file', async () => {
    const dir = await dirWith('yaml', ['bad_yaml.yaml', 'basic_config.yaml']);
    const result = await runCli('-config_dir', dir);
    expect(result.code).to.equal(1);
    expect(result.stdout).to.equal(
      [
        'checking rate limit configs...',
        `loading config directory: ${dir}`,
        `opening config file: ${dir}/bad_yaml.yaml`,
        `error loading rate limit configs: ${dir}/bad_yaml.yaml: error loading config file: yaml: line 2: found unexpected end of stream`,
        '',
      ].join('\n'),
    );
  });

  it('exits 1 when the directory cannot be opened, with Go error text', async () => {
    const missing = join(tmp, 'missing');
    const result = await runCli('-config_dir', missing);
    expect(result.code).to.equal(1);
    expect(result.stdout).to.equal(
      `checking rate limit configs...\nloading config directory: ${missing}\n` +
        `error opening directory ${missing}: open ${missing}: no such file or directory\n`,
    );
  });

  it('behaves like the Go flag package on bad flags (usage on stderr, exit 2) and -h (exit 0)', async () => {
    const unknown = await runCli('-nope');
    expect(unknown.code).to.equal(2);
    expect(unknown.stdout).to.equal('');
    expect(unknown.stderr).to.match(/^flag provided but not defined: -nope\nUsage of chorus-ratelimit-config-check:\n/);
    expect(unknown.stderr).to.contain('  -config_dir string\n');
    const badBool = await runCli('-merge_domain_configs=maybe');
    expect(badBool.code).to.equal(2);
    expect(badBool.stderr).to.match(/^invalid boolean value "maybe" for -merge_domain_configs: parse error\n/);
    const noValue = await runCli('-config_dir');
    expect(noValue.code).to.equal(2);
    expect(noValue.stderr).to.match(/^flag needs an argument: -config_dir\n/);
    const help = await runCli('-h');
    expect(help.code).to.equal(0);
    expect(help.stderr).to.match(/^Usage of chorus-ratelimit-config-check:\n/);
  });
});
