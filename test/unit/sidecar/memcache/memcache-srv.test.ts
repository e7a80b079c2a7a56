// SRV names and the node order derived from SRV answers (upstream src/srv/srv.go); real DNS is in integration.
import { expect } from 'chai';
import { MemcacheError } from '../../../../sidecar/limiter/memcache-error.js';
import { checkSrvName, resolveMemcacheServers, type SrvAnswer } from '../../../../sidecar/limiter/memcache-srv.js';

async function rejection(promise: Promise<unknown>): Promise<MemcacheError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(MemcacheError);
    return err as MemcacheError;
  }
  throw new Error('expected a rejection');
}

describe('memcache SRV', () => {
  it('accepts _service._proto.name and rejects other names', () => {
    checkSrvName('_memcache._tcp.example.com');
    checkSrvName('_a._b.c');
    for (const bad of ['', 'memcache._tcp.example.com', '_memcache.tcp.example.com', '_memcache._tcp', '_._.x']) {
      expect(() => checkSrvName(bad), bad)
        .to.throw(MemcacheError)
        .with.property('code', 'srv');
    }
  });

  it('writes targets as Go does (trailing dot) and sorts by byte order, whatever the answer order', async () => {
    const answers: SrvAnswer[] = [
      { name: 'b.example', port: 11211 },
      { name: 'a.example', port: 11212 },
      { name: 'a.example.', port: 11211 },
      { name: 'a', port: 1 },
      { name: 'A', port: 9 },
    ];
    const servers = await resolveMemcacheServers('_mc._tcp.example', async () => answers);
    // 'a.:1' sorts before 'a.example.:…' (':' < 'e'); capitals first (byte order).
    expect(servers).to.deep.equal(['A.:9', 'a.:1', 'a.example.:11211', 'a.example.:11212', 'b.example.:11211']);
  });

  it('a failed or empty lookup and a malformed name reject with code srv', async () => {
    expect(await rejection(resolveMemcacheServers('_mc._tcp.x', async () => []))).to.have.property('code', 'srv');
    const failed = await rejection(
      resolveMemcacheServers('_mc._tcp.x', async () => {
        throw new Error('queryNxdomain');
      }),
    );
    expect(failed.code).to.equal('srv');
    expect(failed.message).to.contain('queryNxdomain');
    expect(await rejection(resolveMemcacheServers('mc.x', async () => [{ name: 'h', port: 1 }]))).to.have.property(
      'code',
      'srv',
    );
  });
});
