// A tiny authoritative DNS server over UDP on loopback that answers SRV queries from a table the test changes.
import dgram from 'node:dgram';

export interface SrvRecord {
  readonly priority: number;
  readonly weight: number;
  readonly port: number;
  /** Target host name, without the trailing dot. */
  readonly target: string;
}

export interface DnsServer {
  /** `127.0.0.1:<port>`, for dns.Resolver.setServers. */
  readonly address: string;
  /** Replaces the records of an SRV name (e.g. `_memcache._tcp.chorus.test`); [] makes it answer NXDOMAIN. */
  setSrv(name: string, records: readonly SrvRecord[]): void;
  /** How many queries it has answered. */
  queries(): number;
  stop(): Promise<void>;
}

const TYPE_SRV = 33;
const CLASS_IN = 1;

export async function startDnsServer(): Promise<DnsServer> {
  const table = new Map<string, readonly SrvRecord[]>();
  const socket = dgram.createSocket('udp4');
  let answered = 0;

  socket.on('message', (query, peer) => {
    const reply = answer(query, table);
    if (reply === undefined) return;
    answered++;
    socket.send(reply, peer.port, peer.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve();
    });
  });
  const port = socket.address().port;
  return {
    address: `127.0.0.1:${port}`,
    setSrv(name, records) {
      table.set(name.toLowerCase(), records);
    },
    queries: () => answered,
    stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** The reply to one query, or undefined for something that is not a single-question query. */
function answer(query: Buffer, table: ReadonlyMap<string, readonly SrvRecord[]>): Buffer | undefined {
  if (query.length < 12 || query.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let offset = 12;
  while (offset < query.length && query[offset] !== 0) {
    const length = query[offset]!;
    if (length > 63) return undefined;
    labels.push(query.toString('ascii', offset + 1, offset + 1 + length));
    offset += 1 + length;
  }
  offset += 1;
  if (offset + 4 > query.length) return undefined;
  const qtype = query.readUInt16BE(offset);
  const questionEnd = offset + 4;
  const records = qtype === TYPE_SRV ? table.get(labels.join('.').toLowerCase()) : undefined;
  const found = records !== undefined && records.length > 0;

  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  const rd = query.readUInt16BE(2) & 0x0100;
  // QR, AA, RA, the client's RD; RCODE 3 (NXDOMAIN) when the name has no SRV records.
  header.writeUInt16BE(0x8000 | 0x0400 | 0x0080 | rd | (found ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(found ? records.length : 0, 6);
  const parts: Buffer[] = [header, query.subarray(12, questionEnd)];
  if (found) {
    for (const record of records) {
      const target = encodeName(record.target);
      const rr = Buffer.alloc(12 + 6);
      rr.writeUInt16BE(0xc00c, 0); // pointer to the question's name
      rr.writeUInt16BE(TYPE_SRV, 2);
      rr.writeUInt16BE(CLASS_IN, 4);
      rr.writeUInt32BE(1, 6); // TTL 1 s: refresh tests must not be served from a cache
      rr.writeUInt16BE(6 + target.length, 10);
      rr.writeUInt16BE(record.priority, 12);
      rr.writeUInt16BE(record.weight, 14);
      rr.writeUInt16BE(record.port, 16);
      parts.push(rr, target);
    }
  }
  return Buffer.concat(parts);
}

function encodeName(name: string): Buffer {
  const parts: Buffer[] = [];
  for (const label of name.split('.').filter((l) => l !== '')) {
    const bytes = Buffer.from(label, 'ascii');
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}
