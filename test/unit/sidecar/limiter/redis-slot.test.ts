// Redis Cluster key slots: CRC16 values Redis documents and hash tags.
import { expect } from 'chai';
import { redisKeySlot } from '../../../../sidecar/limiter/redis-slot.js';

describe('redis key slot', () => {
  it('matches the slots Redis computes', () => {
    // The CRC16 check value of '123456789' is 0x31C3; the others are CLUSTER KEYSLOT answers.
    expect(redisKeySlot('123456789')).to.equal(0x31c3);
    expect(redisKeySlot('foo')).to.equal(12182);
    expect(redisKeySlot('bar')).to.equal(5061);
    expect(redisKeySlot('')).to.equal(0);
  });

  it('hashes only the first non-empty {hash tag}', () => {
    expect(redisKeySlot('{user1000}.following')).to.equal(redisKeySlot('user1000'));
    expect(redisKeySlot('a{foo}b{bar}')).to.equal(redisKeySlot('foo'));
    expect(redisKeySlot('{}foo')).to.not.equal(redisKeySlot('foo')); // empty tag: the whole key counts
    expect(redisKeySlot('{}foo')).to.equal(redisKeySlot('{}foo'));
    expect(redisKeySlot('foo{')).to.not.equal(redisKeySlot(''));
  });

  it('hashes the UTF-8 bytes of the key', () => {
    expect(redisKeySlot('é')).to.be.within(0, 16383);
    expect(redisKeySlot('{é}x')).to.equal(redisKeySlot('é'));
  });
});
