// Memcache nodes from a DNS SRV record (MEMCACHE_SRV), sorted as upstream, and its periodic re-resolution.
import type { Logger } from '../logger.js';
import { MemcacheError } from './memcache-error.js';

/** One SRV answer: target host (with or without the trailing dot) and port. */
export interface SrvAnswer {
  readonly name: string;
  readonly port: number;
}

/** Resolves an SRV name (`_service._proto.name`); node:dns `Resolver.resolveSrv` fits. */
export type SrvLookup = (name: string) => Promise<readonly SrvAnswer[]>;

/** Upstream's srvRegex: `_service._proto.name`, each part non-empty. */
const SRV_NAME = /^_(.+?)\._(.+?)\.(.+)$/;

/** @throws MemcacheError `srv` when the name is not `_service._proto.name` */
export function checkSrvName(srv: string): void {
  if (!SRV_NAME.test(srv)) throw new MemcacheError('srv', `could not parse ${srv} to SRV parts`);
}

/**
 * The node list for an SRV name: `target:port` per answer, targets written as Go's resolver returns them
 * (absolute, with a trailing dot), sorted by byte order. Upstream sorts because gomemcache places keys by list
 * position; using Go's exact strings keeps the order, and so the key placement, identical to upstream's.
 * @throws MemcacheError `srv` when the name is malformed, the lookup fails or returns no answer
 */
export async function resolveMemcacheServers(srv: string, lookup: SrvLookup): Promise<string[]> {
  checkSrvName(srv);
  let answers: readonly SrvAnswer[];
  try {
    answers = await lookup(srv);
  } catch (err) {
    throw new MemcacheError('srv', `failed to lookup SRV ${srv}: ${(err as Error).message}`, { cause: err });
  }
  if (answers.length === 0) throw new MemcacheError('srv', `SRV ${srv} has no records`);
  const servers = answers.map((a) => `${a.name.endsWith('.') ? a.name : a.name + '.'}:${a.port}`);
  // Byte order like Go's sort.Strings (names are ASCII; the default sort compares UTF-16 units).
  return servers.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export interface SrvRefreshOptions {
  readonly srv: string;
  /** MEMCACHE_SRV_REFRESH; > 0. */
  readonly intervalMs: number;
  readonly lookup: SrvLookup;
  /** Called with the new list whenever it differs from the last one applied. */
  readonly onServers: (servers: readonly string[]) => void;
  /** The list in use now (from the startup lookup). */
  readonly initial: readonly string[];
  readonly logger: Logger;
}

export interface SrvRefresh {
  /** Stops the timer; a lookup in flight is ignored when it ends. Idempotent. */
  stop(): void;
}

/**
 * Re-resolves every intervalMs (unref'd timer, never two lookups at once). A failed or empty lookup keeps the
 * current list and logs a warning, as upstream.
 */
export function startSrvRefresh(options: SrvRefreshOptions): SrvRefresh {
  let current = options.initial.join(',');
  let stopped = false;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    resolveMemcacheServers(options.srv, options.lookup)
      .then((servers) => {
        if (stopped) return;
        const joined = servers.join(',');
        if (joined === current) return;
        current = joined;
        options.logger.info('memcache hosts changed', { srv: options.srv, servers });
        options.onServers(servers);
      })
      .catch((err: unknown) => {
        if (!stopped) options.logger.warn('failed to refresh memcache hosts', { error: (err as Error).message });
      })
      .finally(() => {
        running = false;
      });
  }, options.intervalMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
