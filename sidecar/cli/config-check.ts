#!/usr/bin/env node
// chorus-ratelimit-config-check: validates a directory of rate limit config files like upstream's ratelimit_config_check.
//
// Same flags (Go flag syntax), same output lines, exit 0 when all files load and 1 otherwise. Differences from
// upstream: a YAML syntax or structural (unknown key, …) error prints `error loading rate limit configs: …` and exits
// 1, where upstream panics with exit code 2; sub-directories are skipped instead of failing with "is a directory".
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildRateLimitConfig, ConfigError, parseConfigSource, type ParsedConfigSource } from '../config/index.js';

const PROGRAM = 'chorus-ratelimit-config-check';

interface CheckOptions {
  readonly configDir: string;
  readonly mergeDomainConfigs: boolean;
}

type FlagOutcome =
  { readonly kind: 'ok'; readonly options: CheckOptions } | { readonly kind: 'exit'; readonly code: number };

const USAGE = `Usage of ${PROGRAM}:
  -config_dir string
    \tpath to directory containing rate limit configs
  -merge_domain_configs
    \twhether to merge configurations, referencing the same domain
`;

/** Go strconv.ParseBool. */
function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/** Go's flag package with ExitOnError: -h/-help print usage (exit 0); a bad flag prints the error and usage (exit 2). */
export function parseFlags(args: readonly string[], stderr: (text: string) => void): FlagOutcome {
  let configDir = '';
  let mergeDomainConfigs = false;
  const failure = (message: string): FlagOutcome => {
    stderr(`${message}\n${USAGE}`);
    return { kind: 'exit', code: 2 };
  };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg.length < 2 || !arg.startsWith('-')) break;
    let body = arg.slice(1);
    if (body.startsWith('-')) {
      body = body.slice(1);
      if (body === '') break; // `--` ends the flags
    }
    if (body === '' || body.startsWith('-') || body.startsWith('=')) return failure(`bad flag syntax: ${arg}`);
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const inline = eq < 0 ? undefined : body.slice(eq + 1);
    if (name === 'config_dir') {
      if (inline !== undefined) configDir = inline;
      else if (i + 1 < args.length) configDir = args[++i]!;
      else return failure(`flag needs an argument: -${name}`);
    } else if (name === 'merge_domain_configs') {
      if (inline === undefined) {
        mergeDomainConfigs = true;
      } else {
        const value = parseGoBool(inline);
        if (value === undefined) return failure(`invalid boolean value "${inline}" for -${name}: parse error`);
        mergeDomainConfigs = value;
      }
    } else if (name === 'h' || name === 'help') {
      stderr(USAGE);
      return { kind: 'exit', code: 0 };
    } else {
      return failure(`flag provided but not defined: -${name}`);
    }
  }
  return { kind: 'ok', options: { configDir, mergeDomainConfigs } };
}

/** Go's os.PathError text for the common errno codes (`open <path>: no such file or directory`). */
function goPathError(op: string, path: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  const text: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    ENOTDIR: 'not a directory',
    EISDIR: 'is a directory',
    ELOOP: 'too many levels of symbolic links',
  };
  const detail = code !== undefined ? text[code] : undefined;
  return `${op} ${path}: ${detail ?? (err instanceof Error ? err.message : String(err))}`;
}

/** Runs the check; returns the exit code. Output goes through the given writers (stdout as upstream prints). */
export function runConfigCheck(
  args: readonly string[],
  out: (text: string) => void,
  err: (text: string) => void,
): number {
  const flags = parseFlags(args, err);
  if (flags.kind === 'exit') return flags.code;
  const { configDir, mergeDomainConfigs } = flags.options;
  out('checking rate limit configs...\n');
  out(`loading config directory: ${configDir}\n`);
  let names: string[];
  try {
    if (configDir === '') throw Object.assign(new Error('empty path'), { code: 'ENOENT' });
    names = readdirSync(configDir).sort();
  } catch (e) {
    out(`error opening directory ${configDir}: ${goPathError('open', configDir, e)}\n`);
    return 1;
  }
  const parsed: ParsedConfigSource[] = [];
  try {
    for (const name of names) {
      const path = join(configDir, name);
      let isFile: boolean;
      try {
        isFile = statSync(path).isFile();
      } catch {
        isFile = true; // a dangling symlink: let the read report it as upstream would
      }
      if (!isFile) continue;
      out(`opening config file: ${path}\n`);
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (e) {
        out(`error reading file ${path}: ${goPathError('open', path, e)}\n`);
        return 1;
      }
      parsed.push(parseConfigSource({ name: path, yaml: text }));
    }
    buildRateLimitConfig(parsed, { mergeDomainConfig: mergeDomainConfigs });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    out(`error loading rate limit configs: ${e.message}\n`);
    return 1;
  }
  out('all rate limit configs ok\n');
  return 0;
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  return import.meta.url === pathToFileURL(entry).href || basename(entry) === PROGRAM;
}

if (isMain()) {
  const code = runConfigCheck(
    process.argv.slice(2),
    (text) => process.stdout.write(text),
    (text) => process.stderr.write(text),
  );
  process.exitCode = code;
}
