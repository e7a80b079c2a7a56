// Pure parsing of Redis settings (auth, host:port) and the startup backoff schedule.
import { expect } from 'chai';
import { BackendError } from '../../../../sidecar/errors.js';
import { exponentialBackoff } from '../../../../sidecar/limiter/backoff.js';
import { parseHostPort, parseRedisAuth } from '../../../../sidecar/limiter/redis-pool.js';

describe('redis options parsing and startup backoff', () => {
  it('REDIS_AUTH: password, or user:password split at the first colon', () => {
    expect(parseRedisAuth('')).to.deep.equal({});
    expect(parseRedisAuth('secret')).to.deep.equal({ password: 'secret' });
    expect(parseRedisAuth('alice:pa:ss')).to.deep.equal({ username: 'alice', password: 'pa:ss' });
    expect(parseRedisAuth(':pw')).to.deep.equal({ username: '', password: 'pw' });
  });

  it('REDIS_URL host:port, bracketed IPv6, and bad addresses', () => {
    expect(parseHostPort('127.0.0.1:6379')).to.deep.equal({ host: '127.0.0.1', port: 6379 });
    expect(parseHostPort('[::1]:7000')).to.deep.equal({ host: '::1', port: 7000 });
    for (const bad of ['localhost', ':6379', 'h:0', 'h:70000', 'h:abc']) {
      expect(() => parseHostPort(bad), bad).to.throw(BackendError, 'invalid redis address');
    }
  });

  it('backoff doubles from the initial interval up to the max, with ±50 % jitter', () => {
    const mid = exponentialBackoff({ initialIntervalMs: 1000, maxIntervalMs: 30000, maxElapsedMs: 0 }, () => 0.5);
    expect(Array.from({ length: 7 }, mid)).to.deep.equal([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    const low = exponentialBackoff({ initialIntervalMs: 1000, maxIntervalMs: 30000, maxElapsedMs: 0 }, () => 0);
    expect([low(), low()]).to.deep.equal([500, 1000]);
    const high = exponentialBackoff({ initialIntervalMs: 1000, maxIntervalMs: 30000, maxElapsedMs: 0 }, () => 0.999999);
    expect(high()).to.equal(1500);
  });
});
