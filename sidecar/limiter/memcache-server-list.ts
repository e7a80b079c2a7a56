// The memcache node list and the choice of node per key, identical to gomemcache's ServerList (crc32 % n).
import { MemcacheError } from './memcache-error.js';

/** memcached's key limit; gomemcache refuses longer keys with ErrMalformedKey. */
export const MEMCACHE_MAX_KEY_BYTES = 250;

/** A node address as given (`host:port`, `[v6]:port`), split for net.connect. */
export interface MemcacheAddress {
  /** The address string exactly as configured or derived from SRV; identifies the node's pool. */
  readonly address: string;
  /** Host to dial: an absolute name's trailing dot (SRV targets, `cache.example.` ) is dropped. */
  readonly host: string;
  readonly port: number;
}

export interface MemcacheServerList {
  /**
   * The node that owns `key`: the only node when there is one, otherwise crc32-IEEE(key) modulo the node count,
   * in list order, so every instance with the same list (in the same order) picks the same node.
   * @throws MemcacheError `malformed_key` for an illegal key, `no_servers` for an empty list.
   */
  pick(key: string): MemcacheAddress;
  /** Replaces the nodes (same order semantics). Parses all first; on error nothing changes. @throws MemcacheError */
  set(addresses: readonly string[]): void;
  /** The current nodes in order. */
  nodes(): readonly MemcacheAddress[];
}

const CRC32_TABLE = buildCrc32Table();

function buildCrc32Table(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

/** CRC-32 (IEEE 802.3, Go's crc32.ChecksumIEEE) of a string whose characters are all single bytes. */
export function crc32Ieee(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC32_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** gomemcache's legalKey: at most 250 bytes, every byte printable ASCII other than space (0x21–0x7e). */
export function isLegalMemcacheKey(key: string): boolean {
  if (key.length > MEMCACHE_MAX_KEY_BYTES) return false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c <= 0x20 || c > 0x7e) return false;
  }
  return true;
}

/** Splits `host:port` or `[v6]:port`. @throws MemcacheError `connection` for anything else. */
export function parseMemcacheAddress(address: string): MemcacheAddress {
  const match = /^(?:\[([^\]\s]+)\]|([^\s:[\]/]+)):(\d{1,5})$/.exec(address);
  const port = match === null ? NaN : Number(match[3]);
  if (match === null || !(port > 0 && port < 65536)) {
    throw new MemcacheError('connection', `invalid memcache address '${address}': expected host:port`);
  }
  const host = match[1] ?? match[2]!;
  return { address, host: host.length > 1 && host.endsWith('.') ? host.slice(0, -1) : host, port };
}

export function createMemcacheServerList(addresses: readonly string[]): MemcacheServerList {
  let nodes: readonly MemcacheAddress[] = addresses.map(parseMemcacheAddress);
  return {
    pick(key) {
      if (!isLegalMemcacheKey(key)) {
        throw new MemcacheError(
          'malformed_key',
          'malformed: key is too long or contains invalid characters (memcache keys are at most 250 printable ASCII bytes)',
        );
      }
      if (nodes.length === 0) throw new MemcacheError('no_servers', 'memcache: no servers configured or available');
      if (nodes.length === 1) return nodes[0]!;
      return nodes[crc32Ieee(key) % nodes.length]!;
    },
    set(next) {
      nodes = next.map(parseMemcacheAddress);
    },
    nodes: () => nodes,
  };
}
