#!/usr/bin/env node
// chorus-speech-admin: workspaces, members and API keys in the gateway's store (spec A.7); stdout/stderr/exit codes.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { issueApiKey, parseScopes } from '../auth/index.js';
import { loadSpeechSettings, SettingsError } from '../settings.js';
import {
  createApiKeyRepository,
  createWorkspaceRepository,
  MEMBER_ROLES,
  openDatabase,
  StoreError,
  type Database,
  type MemberRole,
} from '../store/index.js';

export const ADMIN_PROGRAM = 'chorus-speech-admin';

/** Exit codes: 0 success, 1 the operation failed (not found, store problem), 2 bad usage. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

const USAGE = `usage:
  ${ADMIN_PROGRAM} workspace create NAME
  ${ADMIN_PROGRAM} workspace list
  ${ADMIN_PROGRAM} member add --workspace ID --email EMAIL --role owner|admin|member|viewer
  ${ADMIN_PROGRAM} key create --workspace ID (--member ID | --service-account NAME) --scopes audio,voices,voices:write
  ${ADMIN_PROGRAM} key list --workspace ID
  ${ADMIN_PROGRAM} key revoke KEY_ID
The store is DATABASE_URL (PostgreSQL) or, when unset, PGlite in DATA_DIR (default ./data).`;

export interface AdminIo {
  readonly stdout: (line: string) => void;
  readonly stderr: (line: string) => void;
}

class UsageError extends Error {}
class CommandError extends Error {}

type Options = Readonly<Record<string, string | undefined>>;

function parse(args: readonly string[], options: readonly string[]): { positionals: string[]; values: Options } {
  try {
    const parsed = parseArgs({
      args: [...args],
      options: Object.fromEntries(options.map((o) => [o, { type: 'string' as const }])),
      allowPositionals: true,
      strict: true,
    });
    return { positionals: parsed.positionals, values: parsed.values as Options };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function required(values: Options, name: string): string {
  const value = values[name];
  if (value === undefined || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value.trim();
}

function exactlyOne(positionals: readonly string[], what: string): string {
  if (positionals.length !== 1 || (positionals[0] ?? '').trim() === '') {
    throw new UsageError(`expected exactly one ${what}`);
  }
  return (positionals[0] ?? '').trim();
}

async function requireWorkspace(db: Database, id: string): Promise<void> {
  if ((await createWorkspaceRepository(db).get(id)) === null) throw new CommandError(`workspace ${id} not found`);
}

async function run(db: Database, command: string, sub: string, rest: readonly string[], io: AdminIo): Promise<void> {
  const workspaces = createWorkspaceRepository(db);
  const keys = createApiKeyRepository(db);
  const key = `${command} ${sub}`;
  switch (key) {
    case 'workspace create': {
      const name = exactlyOne(parse(rest, []).positionals, 'workspace NAME');
      try {
        io.stdout((await workspaces.create(name)).id);
      } catch (err) {
        if (err instanceof StoreError && err.code === 'unique_violation') {
          throw new CommandError(`a workspace named "${name}" already exists`);
        }
        throw err;
      }
      return;
    }
    case 'workspace list': {
      parse(rest, []);
      for (const w of await workspaces.list()) io.stdout(`${w.id}\t${w.name}\t${w.createdAt.toISOString()}`);
      return;
    }
    case 'member add': {
      const { values, positionals } = parse(rest, ['workspace', 'email', 'role']);
      if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
      const workspaceId = required(values, 'workspace');
      const email = required(values, 'email');
      const roleText = required(values, 'role');
      if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new UsageError(`--email ${email} is not an e-mail address`);
      const role = MEMBER_ROLES.find((r) => r === roleText);
      if (role === undefined) throw new UsageError(`--role must be one of ${MEMBER_ROLES.join(', ')}`);
      await requireWorkspace(db, workspaceId);
      try {
        io.stdout((await workspaces.addMember(workspaceId, email, role as MemberRole)).id);
      } catch (err) {
        if (err instanceof StoreError && err.code === 'unique_violation') {
          throw new CommandError(`${email} is already a member of workspace ${workspaceId}`);
        }
        throw err;
      }
      return;
    }
    case 'key create': {
      const { values, positionals } = parse(rest, ['workspace', 'member', 'service-account', 'scopes']);
      if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
      const workspaceId = required(values, 'workspace');
      const member = values.member?.trim();
      const serviceAccount = values['service-account']?.trim();
      if ((member === undefined) === (serviceAccount === undefined) || member === '' || serviceAccount === '') {
        throw new UsageError('give exactly one of --member ID or --service-account NAME');
      }
      let scopes;
      try {
        scopes = parseScopes(required(values, 'scopes'));
      } catch (err) {
        if (err instanceof RangeError) throw new UsageError(`--scopes: ${err.message}`);
        throw err;
      }
      await requireWorkspace(db, workspaceId);
      if (member !== undefined) {
        const record = await workspaces.getMember(member);
        if (record === null || record.workspaceId !== workspaceId) {
          throw new CommandError(`member ${member} not found in workspace ${workspaceId}`);
        }
      }
      const issued = await issueApiKey(
        keys,
        workspaceId,
        member !== undefined ? { memberId: member } : { serviceAccount: serviceAccount ?? '' },
        scopes,
      );
      io.stdout(`key id: ${issued.record.id}`);
      io.stdout(`scopes: ${issued.record.scopes.join(',')}`);
      io.stdout('the key is shown only now; store it safely:');
      io.stdout(issued.key);
      return;
    }
    case 'key list': {
      const { values, positionals } = parse(rest, ['workspace']);
      if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
      const workspaceId = required(values, 'workspace');
      await requireWorkspace(db, workspaceId);
      for (const k of await keys.listByWorkspace(workspaceId)) {
        const holder =
          k.memberId !== null
            ? `member:${k.memberId}(${k.memberRole ?? ''})`
            : `service-account:${k.serviceAccount ?? ''}`;
        const status = k.revokedAt === null ? 'active' : `revoked ${k.revokedAt.toISOString()}`;
        io.stdout(
          `${k.id}\tchs_${k.prefix}_…\t${holder}\t${k.scopes.join(',')}\t${k.createdAt.toISOString()}\t${status}`,
        );
      }
      return;
    }
    case 'key revoke': {
      const id = exactlyOne(parse(rest, []).positionals, 'KEY_ID');
      if (!(await keys.revoke(id))) throw new CommandError(`key ${id} not found or already revoked`);
      io.stdout(`revoked ${id}`);
      return;
    }
    default:
      throw new UsageError(`unknown command "${key.trim()}"`);
  }
}

/** Runs one admin command; returns the exit code. Never throws. */
export async function runAdmin(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: AdminIo,
): Promise<number> {
  const [command = '', sub = '', ...rest] = argv;
  if (command === '' || command === 'help' || command === '--help' || command === '-h') {
    (command === '' ? io.stderr : io.stdout)(USAGE);
    return command === '' ? EXIT_USAGE : EXIT_OK;
  }
  let db: Database | undefined;
  try {
    if (
      !['workspace create', 'workspace list', 'member add', 'key create', 'key list', 'key revoke'].includes(
        `${command} ${sub}`,
      )
    ) {
      throw new UsageError(`unknown command "${`${command} ${sub}`.trim()}"`);
    }
    const settings = loadSpeechSettings(env);
    db = await openDatabase(settings, ADMIN_PROGRAM);
    await run(db, command, sub, rest, io);
    return EXIT_OK;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`${ADMIN_PROGRAM}: ${err.message}`);
      io.stderr(USAGE);
      return EXIT_USAGE;
    }
    if (err instanceof SettingsError) {
      io.stderr(`${ADMIN_PROGRAM}: ${err.message}`);
      return EXIT_USAGE;
    }
    if (err instanceof CommandError || err instanceof StoreError) {
      io.stderr(`${ADMIN_PROGRAM}: ${err.message}`);
      return EXIT_FAILED;
    }
    io.stderr(`${ADMIN_PROGRAM}: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return EXIT_FAILED;
  } finally {
    await db?.close().catch(() => undefined);
  }
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  const code = await runAdmin(process.argv.slice(2), process.env, {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
  });
  process.exitCode = code;
}
