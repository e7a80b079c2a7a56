// Starts a real gateway (PGlite in a temp dir, loopback port 0) around a given engine, with helpers for keys.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger, type Logger } from '../../../../sidecar/logger.js';
import { issueApiKey, type Scope } from '../../../../speech/auth/index.js';
import type { SpeechEngine } from '../../../../speech/engine/engine.js';
import { startGateway, type Gateway } from '../../../../speech/gateway.js';
import { loadSpeechSettings } from '../../../../speech/settings.js';
import {
  createApiKeyRepository,
  createWorkspaceRepository,
  openDatabase,
  type MemberRole,
} from '../../../../speech/store/index.js';

export interface TestGateway {
  readonly url: string;
  readonly gateway: Gateway;
  readonly ownerKey: string;
  readonly defaultWorkspaceId: string;
  /** The PGlite data directory (unused with PostgreSQL). */
  readonly dataDir: string;
  /** The PostgreSQL URL, or undefined for PGlite. */
  readonly databaseUrl?: string;
  /** A new key in `workspaceId` (default: the bootstrap workspace) for a member of `role` or a service account. */
  key(role: MemberRole | 'service-account', scopes: readonly Scope[], workspaceId?: string): Promise<string>;
  /** A new workspace and an owner key with all scopes in it. */
  otherWorkspace(name: string): Promise<{ readonly workspaceId: string; readonly key: string }>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  readonly engine: SpeechEngine;
  readonly sseKeepaliveMs?: number;
  readonly databaseUrl?: string;
  readonly logger?: Logger;
}

// Creating a PGlite store runs initdb in WebAssembly (seconds on a busy machine); each test gateway starts from a
// copy of one migrated, otherwise empty store made once per test process.
let template: Promise<string> | undefined;

async function emptyStoreTemplate(): Promise<string> {
  template ??= (async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-gw-template-'));
    const db = await openDatabase({ databaseUrl: null, dataDir: dir }, 'test-template');
    await db.close();
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  })();
  return template;
}

export async function startTestGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'chorus-gw-'));
  if (options.databaseUrl === undefined) cpSync(await emptyStoreTemplate(), dataDir, { recursive: true });
  const settings = loadSpeechSettings({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ...(options.databaseUrl === undefined ? {} : { DATABASE_URL: options.databaseUrl }),
  });
  const gateway = await startGateway({
    settings,
    logger: options.logger ?? silentLogger,
    createEngine: () => options.engine,
    defaultMetrics: false,
    ...(options.sseKeepaliveMs === undefined ? {} : { sseKeepaliveMs: options.sseKeepaliveMs }),
  });
  if (gateway.bootstrapKey === null) throw new Error('expected a bootstrap key on an empty store');
  const workspaces = createWorkspaceRepository(gateway.database);
  const keys = createApiKeyRepository(gateway.database);
  const defaultWorkspaceId = (await workspaces.list())[0]?.id ?? '';
  let n = 0;
  const key = async (
    role: MemberRole | 'service-account',
    scopes: readonly Scope[],
    workspaceId = defaultWorkspaceId,
  ) => {
    n += 1;
    if (role === 'service-account')
      return (await issueApiKey(keys, workspaceId, { serviceAccount: `sa${n}` }, scopes)).key;
    const member = await workspaces.addMember(workspaceId, `user${n}@example.com`, role);
    return (await issueApiKey(keys, workspaceId, { memberId: member.id }, scopes)).key;
  };
  return {
    url: `http://127.0.0.1:${gateway.port}`,
    gateway,
    ownerKey: gateway.bootstrapKey,
    defaultWorkspaceId,
    dataDir,
    ...(options.databaseUrl === undefined ? {} : { databaseUrl: options.databaseUrl }),
    key,
    async otherWorkspace(name) {
      const ws = await workspaces.create(name);
      return { workspaceId: ws.id, key: await key('owner', ['audio', 'voices', 'voices:write'], ws.id) };
    },
    async close() {
      await gateway.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** fetch with a JSON body and a bearer key. */
export async function postJson(
  url: string,
  key: string | null,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function get(
  url: string,
  key: string | null,
  headers: Readonly<Record<string, string>> = {},
): Promise<Response> {
  return fetch(url, { headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...headers } });
}

interface ErrorBody {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly request_id: string;
    readonly fields?: Record<string, string>;
  };
}

/** Asserts nothing; returns status and parsed error envelope. */
export async function errorOf(response: Response): Promise<{ status: number; body: ErrorBody }> {
  return { status: response.status, body: (await response.json()) as ErrorBody };
}

/** Polls /readyz until 200 (engines load after the port opens); fails after `timeoutMs`. */
export async function waitUntilReady(baseUrl: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${baseUrl}/readyz`);
    if (res.status === 200) return;
    if (Date.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms: ${await res.text()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
