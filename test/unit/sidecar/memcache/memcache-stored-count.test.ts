// How a stored memcache counter is read: Go's ParseInt(v, 10, 32) then uint32, 0 for anything else.
import { expect } from 'chai';
import { parseStoredCount } from '../../../../sidecar/limiter/backend-memcache.js';

describe('memcache stored count', () => {
  it('reads decimal int32 values', () => {
    expect(parseStoredCount('0')).to.equal(0);
    expect(parseStoredCount('17')).to.equal(17);
    expect(parseStoredCount('+5')).to.equal(5);
    expect(parseStoredCount('2147483647')).to.equal(2147483647);
  });

  it('reads a miss, non-numbers and values beyond int32 as 0', () => {
    for (const v of [undefined, '', 'abc', '1.5', ' 1', '1 ', '0x10', '2147483648', '99999999999']) {
      expect(parseStoredCount(v), String(v)).to.equal(0);
    }
  });

  it('wraps negative int32 values to uint32 as Go does', () => {
    expect(parseStoredCount('-1')).to.equal(4294967295);
    expect(parseStoredCount('-2147483648')).to.equal(2147483648);
  });
});
