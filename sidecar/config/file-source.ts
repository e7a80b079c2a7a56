// The FILE config source: reads the runtime directory like upstream's goruntime loader and reloads on changes.
//
// Upstream semantics (spec §1.2 Config source, §1.12 item 7, §2.15): every regular file under the directory is a
// config source, named by its path relative to ROOT/SUB with `/` → `.` and the extension kept (`config.basic.yaml`);
// with watchRoot=false the name is relative to the app directory instead. RUNTIME_IGNOREDOTFILES skips dot files and
// dot directories (the Kubernetes `..data` layout). watchRoot=true reloads only when ROOT itself (a symlink) is
// swapped; watchRoot=false reloads on any change inside ROOT/SUB/APP.
// Differences from upstream, on purpose: sources load in sorted name order (upstream: Go map order, so which error
// or duplicate is reported is random there); symlinks to directories inside the tree are not followed (no loops, no
// double reads); change detection re-reads the tree after every event (debounced) and compares contents and file
// stats, because fs.watch can coalesce or drop events.
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { Logger } from '../logger.js';
import { ConfigError } from './config-error.js';
import { loadRateLimitConfig } from './load.js';
import type { RateLimitConfig } from './types.js';

export interface FileSourceSettings {
  /** RUNTIME_ROOT, e.g. /srv/runtime_data/current (usually a symlink). */
  readonly runtimeRoot: string;
  /** RUNTIME_SUBDIRECTORY; may be ''. */
  readonly runtimeSubdirectory: string;
  /** RUNTIME_APPDIRECTORY, default `config`. */
  readonly runtimeAppDirectory: string;
  /** RUNTIME_IGNOREDOTFILES: skip files and directories whose name starts with `.`. */
  readonly ignoreDotFiles: boolean;
  /** RUNTIME_WATCH_ROOT: true reloads when ROOT is swapped; false on changes inside ROOT/SUB/APP. */
  readonly watchRoot: boolean;
  /** MERGE_DOMAIN_CONFIG. */
  readonly mergeDomainConfig: boolean;
}

export interface FileSourceHandlers {
  readonly logger: Logger;
  /** A complete, valid rule set (possibly with no domains); `sourceNames` in load order. */
  onConfig(config: RateLimitConfig, sourceNames: readonly string[]): void;
  /**
   * A load that produced nothing new: a ConfigError for a rejected config, a FileSourceError when the tree could not
   * be read. The caller keeps its current config (and counts config_load_error).
   */
  onError(err: ConfigError | FileSourceError): void;
}

export interface FileSourceOptions {
  /** Delay between a file event and the re-read of the tree (events meanwhile join it); default 100 ms. */
  readonly debounceMs?: number;
}

export interface FileConfigSource {
  /** Performs the initial load (reported through the handlers), then starts watching. */
  start(): Promise<void>;
  /** Stops watching and waits for an in-flight reload; no handler is called afterwards. */
  stop(): Promise<void>;
}

/** The runtime directory could not be read (permissions, I/O). */
export class FileSourceError extends Error {
  readonly code = 'read_error';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FileSourceError';
  }
}

interface FileEntry {
  readonly content: string;
  /** Size, times, mode and inode: a chmod or a same-content rewrite still counts as a change, as upstream reloads. */
  readonly signature: string;
}

interface Snapshot {
  /** Config sources by name, sorted. */
  readonly files: ReadonlyMap<string, FileEntry>;
  /** Directories read (to watch them when watchRoot=false). */
  readonly directories: readonly string[];
  /** The directory that was supposed to be read did not exist. */
  readonly missing: boolean;
}

function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function sameFiles(a: ReadonlyMap<string, FileEntry>, b: ReadonlyMap<string, FileEntry>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, entry] of a) {
    const other = b.get(name);
    if (other === undefined || other.signature !== entry.signature || other.content !== entry.content) return false;
  }
  return true;
}

export function createFileConfigSource(
  settings: FileSourceSettings,
  handlers: FileSourceHandlers,
  options: FileSourceOptions = {},
): FileConfigSource {
  const debounceMs = options.debounceMs ?? 100;
  const subRoot = join(settings.runtimeRoot, settings.runtimeSubdirectory);
  const appDir = join(subRoot, settings.runtimeAppDirectory);
  // watchRoot=true walks ROOT/SUB and keeps the keys under the app directory, as goruntime does.
  const walkRoot = settings.watchRoot ? subRoot : appDir;
  const appPrefix =
    settings.runtimeAppDirectory
      .split('/')
      .filter((p) => p !== '')
      .join('.') + '.';

  const watchers = new Map<string, { watcher: FSWatcher; filter: string | undefined; ino: number }>();
  let last: ReadonlyMap<string, FileEntry> | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;

  async function walk(dir: string, files: Map<string, FileEntry>, directories: string[]): Promise<void> {
    directories.push(dir);
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    for (const entry of entries) {
      if (settings.ignoreDotFiles && entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        try {
          await walk(path, files, directories);
        } catch (err) {
          // Removed while reading: its removal event schedules another pass.
          if (!isNotFound(err)) throw err;
        }
        continue;
      }
      let info;
      try {
        info = entry.isSymbolicLink() ? await stat(path) : await lstat(path);
      } catch (err) {
        if (isNotFound(err)) continue; // a dangling link or a file removed while reading
        throw err;
      }
      if (!info.isFile()) continue;
      const key = relative(walkRoot, path).split(sep).join('.');
      if (settings.watchRoot && !key.startsWith(appPrefix)) continue;
      let content: string;
      try {
        content = await readFile(path, 'utf8');
      } catch (err) {
        if (isNotFound(err)) continue;
        throw err;
      }
      const signature = `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.mode}:${info.ino}`;
      files.set(key, { content, signature });
    }
  }

  async function scan(): Promise<Snapshot> {
    const files = new Map<string, FileEntry>();
    const directories: string[] = [];
    try {
      await walk(walkRoot, files, directories);
    } catch (err) {
      // Only the top directory being absent means "no config"; anything vanishing deeper is a race to retry.
      if (isNotFound(err) && directories.length <= 1) return { files: new Map(), directories: [], missing: true };
      throw err;
    }
    const sorted = new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return { files: sorted, directories, missing: false };
  }

  /** The nearest existing ancestor of a path (or the path itself), for watching where a directory will appear. */
  async function nearestExisting(path: string): Promise<string> {
    let current = path;
    for (;;) {
      try {
        if ((await stat(current)).isDirectory()) return current;
      } catch {
        // keep climbing
      }
      const parent = dirname(current);
      if (parent === current) return current;
      current = parent;
    }
  }

  /** Not reset by later events, so a steady stream of writes cannot postpone the reload forever. */
  function schedule(): void {
    if (stopped || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      void run();
    }, debounceMs);
  }

  function watchDirectory(dir: string, filter: string | undefined, ino: number): void {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, filename) => {
        if (filter === undefined || filename === null || filename === filter) schedule();
      });
      watcher.on('error', () => {
        watcher.close();
        if (watchers.get(dir)?.watcher === watcher) watchers.delete(dir);
        schedule();
      });
      watchers.set(dir, { watcher, filter, ino });
    } catch (err) {
      handlers.logger.debug('cannot watch directory', { dir, error: String(err) });
    }
  }

  async function syncWatchers(snapshot: Snapshot | undefined): Promise<void> {
    const wanted = new Map<string, string | undefined>();
    if (settings.watchRoot) {
      // Only a swap of ROOT itself triggers a reload (the symlink's directory sees the rename).
      const rootParent = dirname(settings.runtimeRoot);
      const anchor = await nearestExisting(rootParent);
      wanted.set(anchor, anchor === rootParent ? basename(settings.runtimeRoot) : undefined);
    } else if (snapshot === undefined || snapshot.missing) {
      wanted.set(await nearestExisting(appDir), undefined);
    } else {
      for (const dir of snapshot.directories) wanted.set(dir, undefined);
    }
    // A directory deleted and created again under the same path is a new inode: the old watch sees nothing more.
    const inodes = new Map<string, number>();
    for (const dir of wanted.keys()) {
      try {
        inodes.set(dir, (await stat(dir)).ino);
      } catch {
        // gone again: the next event or pass decides
      }
    }
    for (const [dir, watched] of watchers) {
      if (!wanted.has(dir) || inodes.get(dir) !== watched.ino || wanted.get(dir) !== watched.filter) {
        watched.watcher.close();
        watchers.delete(dir);
      }
    }
    if (stopped) return;
    for (const [dir, filter] of wanted) {
      const ino = inodes.get(dir);
      if (ino !== undefined && !watchers.has(dir)) watchDirectory(dir, filter, ino);
    }
  }

  async function reload(): Promise<void> {
    let snapshot: Snapshot;
    try {
      snapshot = await scan();
    } catch (err) {
      if (!stopped) {
        handlers.onError(
          new FileSourceError(`cannot read runtime directory ${walkRoot}: ${String(err)}`, { cause: err }),
        );
      }
      await syncWatchers(undefined);
      return;
    }
    await syncWatchers(snapshot);
    if (stopped) return;
    if (last !== undefined && sameFiles(last, snapshot.files)) return;
    last = snapshot.files;
    if (snapshot.missing) {
      handlers.logger.warn('rate limit config directory does not exist; loading no domains', { dir: walkRoot });
    }
    const names = [...snapshot.files.keys()];
    let config: RateLimitConfig;
    try {
      config = loadRateLimitConfig(
        names.map((name) => ({ name, yaml: snapshot.files.get(name)!.content })),
        { mergeDomainConfig: settings.mergeDomainConfig },
      );
    } catch (err) {
      if (err instanceof ConfigError) {
        handlers.onError(err);
        return;
      }
      throw err;
    }
    handlers.logger.debug('rate limit config loaded', { files: names.length, domains: config.domains.length });
    handlers.onConfig(config, names);
  }

  /** Serialises reloads; an event during a reload causes exactly one more. */
  function run(): Promise<void> {
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await reload();
        } while (again && !stopped);
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  return {
    async start(): Promise<void> {
      stopped = false;
      await syncWatchers(undefined);
      await run();
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      for (const watched of watchers.values()) watched.watcher.close();
      watchers.clear();
      if (running !== undefined) await running;
    },
  };
}
