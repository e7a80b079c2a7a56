// Key legality, crc32 and node choice of the memcache server list (gomemcache's ServerList).
import { expect } from 'chai';
import { crc32 } from 'node:zlib';
import { MemcacheError } from '../../../../sidecar/limiter/memcache-error.js';
import {
  crc32Ieee,
  createMemcacheServerList,
  isLegalMemcacheKey,
  parseMemcacheAddress,
} from '../../../../sidecar/limiter/memcache-server-list.js';

function thrownCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(MemcacheError);
    return (err as MemcacheError).code;
  }
  return undefined;
}

describe('memcache server list', () => {
  it('crc32Ieee matches the IEEE check value and zlib', () => {
    expect(crc32Ieee('123456789')).to.equal(0xcbf43926);
    expect(crc32Ieee('')).to.equal(0);
    for (const key of ['domain_key_value_1700000000', 'a', 'rl_x_y_1234567890', 'z'.repeat(250)]) {
      expect(crc32Ieee(key)).to.equal(crc32(Buffer.from(key, 'ascii')));
    }
  });

  it('legal keys: up to 250 printable ASCII bytes, no space or control characters', () => {
    expect(isLegalMemcacheKey('a'.repeat(250))).to.equal(true);
    expect(isLegalMemcacheKey('!~')).to.equal(true);
    expect(isLegalMemcacheKey('a'.repeat(251))).to.equal(false);
    for (const bad of ['a b', 'a\tb', 'a\nb', 'a\rb', 'a\x00b', 'a\x7fb', 'caf\u00e9', 'emoji\u{1f600}']) {
      expect(isLegalMemcacheKey(bad), JSON.stringify(bad)).to.equal(false);
    }
  });

  it('picks crc32(key) % n in list order, and the only node when there is one', () => {
    const nodes = ['10.0.0.1:11211', '10.0.0.2:11211', '10.0.0.3:11211'];
    const list = createMemcacheServerList(nodes);
    for (let i = 0; i < 200; i++) {
      const key = `domain_k_v${i}_1700000000`;
      expect(list.pick(key).address).to.equal(nodes[crc32(Buffer.from(key)) % 3]);
    }
    const single = createMemcacheServerList(['cache:1']);
    expect(single.pick('anything').address).to.equal('cache:1');
  });

  it('two lists with the same nodes in the same order agree; a reordered list does not have to', () => {
    const a = createMemcacheServerList(['h1:1', 'h2:2']);
    const b = createMemcacheServerList(['h1:1', 'h2:2']);
    const reordered = createMemcacheServerList(['h2:2', 'h1:1']);
    let differs = 0;
    for (let i = 0; i < 50; i++) {
      const key = `k${i}`;
      expect(a.pick(key).address).to.equal(b.pick(key).address);
      if (a.pick(key).address !== reordered.pick(key).address) differs++;
    }
    expect(differs).to.be.greaterThan(0);
  });

  it('refuses illegal keys and empty lists with typed errors', () => {
    const list = createMemcacheServerList(['h:1']);
    expect(thrownCode(() => list.pick('x'.repeat(251)))).to.equal('malformed_key');
    expect(thrownCode(() => list.pick('has space'))).to.equal('malformed_key');
    expect(thrownCode(() => createMemcacheServerList([]).pick('k'))).to.equal('no_servers');
  });

  it('set replaces the nodes, and keeps the old ones when a new address is malformed', () => {
    const list = createMemcacheServerList(['h1:1']);
    list.set(['h2:2', 'h3:3']);
    expect(list.nodes().map((n) => n.address)).to.deep.equal(['h2:2', 'h3:3']);
    expect(thrownCode(() => list.set(['h4:4', 'nope']))).to.equal('connection');
    expect(list.nodes().map((n) => n.address)).to.deep.equal(['h2:2', 'h3:3']);
  });

  it('parses host:port, [v6]:port and absolute names; rejects the rest', () => {
    expect(parseMemcacheAddress('127.0.0.1:11211')).to.deep.equal({
      address: '127.0.0.1:11211',
      host: '127.0.0.1',
      port: 11211,
    });
    expect(parseMemcacheAddress('[::1]:11211')).to.include({ host: '::1', port: 11211 });
    expect(parseMemcacheAddress('cache.example.:11211')).to.include({
      address: 'cache.example.:11211',
      host: 'cache.example',
    });
    for (const bad of ['', 'host', 'host:', ':11211', 'host:0', 'host:65536', 'host:12x', '::1:11211', 'a b:1']) {
      expect(
        thrownCode(() => parseMemcacheAddress(bad)),
        bad,
      ).to.equal('connection');
    }
  });
});
