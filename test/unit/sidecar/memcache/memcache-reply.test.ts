// Parsing of memcached text-protocol replies: complete, incomplete, error lines and corrupt data.
import { expect } from 'chai';
import { MemcacheError } from '../../../../sidecar/limiter/memcache-error.js';
import { parseGetReply, parseIncrReply, parseStoreReply } from '../../../../sidecar/limiter/memcache-reply.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

function serverError(fn: () => unknown): MemcacheError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(MemcacheError);
    expect((err as MemcacheError).code).to.equal('server_error');
    return err as MemcacheError;
  }
  throw new Error('expected a throw');
}

describe('memcache replies', () => {
  it('get: items with and without cas, then END; consumed covers the whole reply', () => {
    const text = 'VALUE a 0 1\r\n5\r\nVALUE bb 0 3 77\r\n123\r\nEND\r\n';
    const parsed = parseGetReply(b(text));
    expect(parsed?.consumed).to.equal(text.length);
    expect([...parsed!.value]).to.deep.equal([
      ['a', '5'],
      ['bb', '123'],
    ]);
    expect([...parseGetReply(b('END\r\n'))!.value]).to.deep.equal([]);
  });

  it('get: every proper prefix is incomplete, not an error', () => {
    const text = 'VALUE a 0 2\r\n12\r\nEND\r\n';
    for (let n = 0; n < text.length; n++) expect(parseGetReply(b(text.slice(0, n))), String(n)).to.equal(undefined);
  });

  it('get: a data block may contain CRLF (length-delimited)', () => {
    const parsed = parseGetReply(b('VALUE a 0 4\r\n\r\n\r\n\r\nEND\r\n'));
    expect(parsed!.value.get('a')).to.equal('\r\n\r\n');
  });

  it('get: error lines, bad headers and a block without its CRLF throw server_error', () => {
    serverError(() => parseGetReply(b('SERVER_ERROR out of memory\r\n')));
    serverError(() => parseGetReply(b('CLIENT_ERROR bad command line format\r\n')));
    serverError(() => parseGetReply(b('ERROR\r\n')));
    serverError(() => parseGetReply(b('VALUE a 0 x\r\n')));
    serverError(() => parseGetReply(b('VALUE a 0\r\n')));
    const corrupt = serverError(() => parseGetReply(b('VALUE a 0 1\r\n12\r\nEND\r\n')));
    expect(corrupt.message).to.contain('corrupt');
  });

  it('incr: a number, NOT_FOUND as miss, anything else an error', () => {
    expect(parseIncrReply(b('42\r\n'))).to.deep.equal({ value: 42, consumed: 4 });
    expect(parseIncrReply(b('NOT_FOUND\r\n'))).to.deep.equal({ value: 'miss', consumed: 11 });
    expect(parseIncrReply(b('4'))).to.equal(undefined);
    serverError(() => parseIncrReply(b('CLIENT_ERROR cannot increment or decrement non-numeric value\r\n')));
    serverError(() => parseIncrReply(b('-1\r\n')));
  });

  it('add: STORED, NOT_STORED, anything else an error', () => {
    expect(parseStoreReply(b('STORED\r\n'))).to.deep.equal({ value: 'stored', consumed: 8 });
    expect(parseStoreReply(b('NOT_STORED\r\n'))).to.deep.equal({ value: 'not_stored', consumed: 12 });
    expect(parseStoreReply(b('STOR'))).to.equal(undefined);
    serverError(() => parseStoreReply(b('SERVER_ERROR object too large for cache\r\n')));
    serverError(() => parseStoreReply(b('EXISTS\r\n')));
  });
});
