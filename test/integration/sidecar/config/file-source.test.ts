import { expect } from 'chai';
import { chmod, mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { desc } from '../../../unit/sidecar/config/helpers.js';
import {
  ConfigError,
  createFileConfigSource,
  type FileConfigSource,
  type FileSourceSettings,
  type RateLimitConfig,
} from '../../../../sidecar/config/index.js';
import type { LogFields, Logger } from '../../../../sidecar/logger.js';

type SourceEvent =
  | { readonly kind: 'config'; readonly config: RateLimitConfig; readonly names: readonly string[] }
  | { readonly kind: 'error'; readonly error: Error };

/** Records handler calls; `next()` waits for the next one (the timeout only bounds a hung test). */
class Recorder {
  readonly events: SourceEvent[] = [];
  readonly warnings: string[] = [];
  private waiters: ((e: SourceEvent) => void)[] = [];
  private read = 0;

  readonly logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message: string, _fields?: LogFields) => void this.warnings.push(message),
    error: () => undefined,
  };

  push(event: SourceEvent): void {
    this.events.push(event);
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      this.read += 1;
      waiter(event);
    }
  }

  next(timeoutMs = 10000): Promise<SourceEvent> {
    if (this.read < this.events.length) return Promise.resolve(this.events[this.read++]!);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no config event arrived')), timeoutMs);
      this.waiters.push((e) => {
        clearTimeout(timer);
        resolve(e);
      });
    });
  }

  async nextConfig(): Promise<{ config: RateLimitConfig; names: readonly string[] }> {
    const event = await this.next();
    if (event.kind !== 'config') throw new Error(`expected a config, got ${event.error.message}`);
    return event;
  }

  async nextError(): Promise<Error> {
    const event = await this.next();
    if (event.kind !== 'error') throw new Error(`expected an error, got a config of ${event.names.join(',')}`);
    return event.error;
  }
}

const limitYaml = (domain: string, rpu: number): string =>
  `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: second\n      requests_per_unit: ${rpu}\n`;

const rpuOf = (config: RateLimitConfig, domain: string): number | undefined =>
  config.getLimit(domain, desc('k=v'))?.requestsPerUnit;

describe('file config source (runtime directory loader)', function () {
  this.timeout(20000);
  let tmp: string;
  const running: FileConfigSource[] = [];

  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'chorus-config-'));
  });

  afterEach(async () => {
    for (const source of running.splice(0)) await source.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  async function start(settings: Partial<FileSourceSettings>): Promise<Recorder> {
    const recorder = new Recorder();
    const source = createFileConfigSource(
      {
        runtimeRoot: tmp,
        runtimeSubdirectory: '',
        runtimeAppDirectory: 'config',
        ignoreDotFiles: false,
        watchRoot: false,
        mergeDomainConfig: false,
        ...settings,
      },
      {
        logger: recorder.logger,
        onConfig: (config, names) => recorder.push({ kind: 'config', config, names }),
        onError: (error) => recorder.push({ kind: 'error', error }),
      },
      { debounceMs: 20 },
    );
    running.push(source);
    await source.start();
    return recorder;
  }

  describe('watchRoot=false', () => {
    it('loads every file recursively, named relative to the app directory, and reloads on write/create/chmod/remove', async () => {
      const app = join(tmp, 'sub', 'config');
      await mkdir(join(app, 'nested'), { recursive: true });
      await writeFile(join(app, 'a.yaml'), limitYaml('a', 1));
      await writeFile(join(app, 'nested', 'b.conf'), limitYaml('b', 2));
      const rec = await start({ runtimeSubdirectory: 'sub' });

      const initial = await rec.nextConfig();
      expect(initial.names).to.deep.equal(['a.yaml', 'nested.b.conf']);
      expect(rpuOf(initial.config, 'b')).to.equal(2);

      await writeFile(join(app, 'a.yaml'), limitYaml('a', 10));
      expect(rpuOf((await rec.nextConfig()).config, 'a')).to.equal(10);

      await writeFile(join(app, 'nested', 'c.yaml'), limitYaml('c', 3));
      expect((await rec.nextConfig()).names).to.deep.equal(['a.yaml', 'nested.b.conf', 'nested.c.yaml']);

      await chmod(join(app, 'a.yaml'), 0o600);
      expect((await rec.nextConfig()).names).to.have.length(3);

      await rm(join(app, 'nested', 'b.conf'));
      const removed = await rec.nextConfig();
      expect(removed.names).to.deep.equal(['a.yaml', 'nested.c.yaml']);
      expect(removed.config.hasDomain('b')).to.equal(false);
    });

    it('reports a bad reload with the file name and keeps nothing new, then recovers', async () => {
      const app = join(tmp, 'config');
      await mkdir(app, { recursive: true });
      await writeFile(join(app, 'a.yaml'), limitYaml('a', 1));
      const rec = await start({});
      await rec.nextConfig();

      await writeFile(join(app, 'b.yaml'), limitYaml('a', 2));
      const err = await rec.nextError();
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as ConfigError).code).to.equal('duplicate_domain');
      expect(err.message).to.equal("b.yaml: duplicate domain 'a' in config file");

      await writeFile(join(app, 'b.yaml'), limitYaml('b', 2));
      const fixed = await rec.nextConfig();
      expect(fixed.config.domains).to.deep.equal(['a', 'b']);
      expect(rec.events.filter((e) => e.kind === 'config')).to.have.length(2);
    });

    it('loads a missing directory as no domains with a warning, and picks the directory up when it appears', async () => {
      const rec = await start({ runtimeAppDirectory: 'later/config' });
      const empty = await rec.nextConfig();
      expect(empty.config.domains).to.deep.equal([]);
      expect(empty.names).to.deep.equal([]);
      expect(rec.warnings.join('\n')).to.contain('does not exist');

      await mkdir(join(tmp, 'later', 'config'), { recursive: true });
      await writeFile(join(tmp, 'later', 'config', 'x.yaml'), limitYaml('x', 4));
      let loaded = await rec.nextConfig();
      // The directory may be seen before the file is written; wait for the load that has it.
      while (loaded.names.length === 0) loaded = await rec.nextConfig();
      expect(loaded.names).to.deep.equal(['x.yaml']);
    });

    it('keeps watching when the app directory is deleted and created again', async () => {
      const app = join(tmp, 'config');
      await mkdir(app, { recursive: true });
      await writeFile(join(app, 'a.yaml'), limitYaml('a', 1));
      const rec = await start({});
      await rec.nextConfig();

      await rm(app, { recursive: true });
      expect((await rec.nextConfig()).config.domains).to.deep.equal([]);
      await mkdir(app);
      await writeFile(join(app, 'b.yaml'), limitYaml('b', 2));
      let loaded = await rec.nextConfig();
      while (loaded.names.length === 0) loaded = await rec.nextConfig();
      expect(loaded.names).to.deep.equal(['b.yaml']);

      await writeFile(join(app, 'b.yaml'), limitYaml('b', 3));
      expect(rpuOf((await rec.nextConfig()).config, 'b')).to.equal(3);
    });

    it('follows a Kubernetes ConfigMap swap inside the app directory with dotfiles ignored', async () => {
      const app = join(tmp, 'config');
      await mkdir(join(app, '..2026_01'), { recursive: true });
      await writeFile(join(app, '..2026_01', 'limits.yaml'), limitYaml('cm', 1));
      await symlink('..2026_01', join(app, '..data'));
      await symlink(join('..data', 'limits.yaml'), join(app, 'limits.yaml'));
      const rec = await start({ ignoreDotFiles: true });
      const initial = await rec.nextConfig();
      expect(initial.names).to.deep.equal(['limits.yaml']);

      await mkdir(join(app, '..2026_02'));
      await writeFile(join(app, '..2026_02', 'limits.yaml'), limitYaml('cm', 2));
      await symlink('..2026_02', join(app, '..data_tmp'));
      await rename(join(app, '..data_tmp'), join(app, '..data'));
      await rm(join(app, '..2026_01'), { recursive: true });
      expect(rpuOf((await rec.nextConfig()).config, 'cm')).to.equal(2);
    });

    it('reads the ConfigMap timestamp directory too when dotfiles are not ignored (upstream issue #367)', async () => {
      const app = join(tmp, 'config');
      await mkdir(join(app, '..2026_01'), { recursive: true });
      await writeFile(join(app, '..2026_01', 'limits.yaml'), limitYaml('cm', 1));
      await symlink('..2026_01', join(app, '..data'));
      await symlink(join('..data', 'limits.yaml'), join(app, 'limits.yaml'));
      await writeFile(join(app, '.hidden.yaml'), limitYaml('hidden', 1));
      const rec = await start({ ignoreDotFiles: false });
      const err = await rec.nextError();
      expect(err.message).to.equal("limits.yaml: duplicate domain 'cm' in config file");
    });
  });

  describe('watchRoot=true', () => {
    it('names files relative to ROOT/SUB, keeps only the app directory, and reloads when the ROOT symlink is swapped', async () => {
      // The exact ConfigMap layout: ROOT is the `..data` symlink, swapped atomically with rename.
      const mount = join(tmp, 'mount');
      await mkdir(join(mount, '..2026_01', 'config'), { recursive: true });
      await writeFile(join(mount, '..2026_01', 'config', 'limits.yaml'), limitYaml('swap', 1));
      await writeFile(join(mount, '..2026_01', 'other.yaml'), limitYaml('other', 1));
      await writeFile(join(mount, '..2026_01', 'config.top.yaml'), limitYaml('top', 1));
      await symlink('..2026_01', join(mount, '..data'));
      const rec = await start({ runtimeRoot: join(mount, '..data'), watchRoot: true });
      const initial = await rec.nextConfig();
      // goruntime keeps every key starting with `config.`, including a file named config.top.yaml beside the app dir.
      expect(initial.names).to.deep.equal(['config.limits.yaml', 'config.top.yaml']);
      expect(rpuOf(initial.config, 'swap')).to.equal(1);

      await mkdir(join(mount, '..2026_02', 'config'), { recursive: true });
      await writeFile(join(mount, '..2026_02', 'config', 'limits.yaml'), limitYaml('swap', 2));
      await symlink('..2026_02', join(mount, '..data_tmp'));
      await rename(join(mount, '..data_tmp'), join(mount, '..data'));
      const swapped = await rec.nextConfig();
      expect(swapped.names).to.deep.equal(['config.limits.yaml']);
      expect(rpuOf(swapped.config, 'swap')).to.equal(2);
    });

    it('reports a bad swapped-in tree and keeps nothing new', async () => {
      const mount = join(tmp, 'mount');
      await mkdir(join(mount, 'v1', 'config'), { recursive: true });
      await writeFile(join(mount, 'v1', 'config', 'limits.yaml'), limitYaml('swap', 1));
      await symlink('v1', join(mount, 'current'));
      const rec = await start({ runtimeRoot: join(mount, 'current'), watchRoot: true });
      await rec.nextConfig();

      await mkdir(join(mount, 'v2', 'config'), { recursive: true });
      await writeFile(
        join(mount, 'v2', 'config', 'limits.yaml'),
        'domain: swap\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: fortnight\n',
      );
      await symlink('v2', join(mount, 'next'));
      await rename(join(mount, 'next'), join(mount, 'current'));
      const err = await rec.nextError();
      expect((err as ConfigError).code).to.equal('invalid_unit');
      expect(err.message).to.equal("config.limits.yaml: invalid rate limit unit 'fortnight'");
    });
  });

  it('stops cleanly: no callbacks after stop()', async () => {
    const app = join(tmp, 'config');
    await mkdir(app, { recursive: true });
    await writeFile(join(app, 'a.yaml'), limitYaml('a', 1));
    const rec = await start({});
    await rec.nextConfig();
    for (const source of running.splice(0)) await source.stop();
    const before = rec.events.length;
    await writeFile(join(app, 'a.yaml'), limitYaml('a', 5));
    // Ten debounce periods: long enough for a reload that was (wrongly) still scheduled to have reported.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(rec.events.length).to.equal(before);
  });
});
