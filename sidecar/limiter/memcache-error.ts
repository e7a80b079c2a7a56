// The typed fault of the memcache client: which memcache outcome it was, so callers branch on `code`.

/**
 * - `cache_miss`: incr on a missing key (memcached NOT_FOUND); expected, the caller then adds the key.
 * - `not_stored`: add lost a race (NOT_STORED); expected, the caller increments again.
 * - `malformed_key`: longer than 250 bytes, or a byte that is whitespace, a control character or not ASCII.
 * - `no_servers`: the server list is empty.
 * - `timeout`: connect or reply took longer than the per-request timeout.
 * - `connection`: connect refused, socket closed or reset, client closed.
 * - `server_error`: ERROR / CLIENT_ERROR / SERVER_ERROR reply, or a reply this client cannot parse.
 * - `srv`: the SRV name is malformed or its lookup failed.
 */
export type MemcacheErrorCode =
  'cache_miss' | 'not_stored' | 'malformed_key' | 'no_servers' | 'timeout' | 'connection' | 'server_error' | 'srv';

export class MemcacheError extends Error {
  constructor(
    readonly code: MemcacheErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MemcacheError';
  }
}
