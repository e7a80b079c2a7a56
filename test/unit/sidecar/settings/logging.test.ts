// The winston logger: logrus text lines, upstream JSON lines, level filtering, credential masking.
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { createLogger, maskCredentials } from '../../../../sidecar/logging.js';
import type { LogFormat, LogLevel } from '../../../../sidecar/settings/settings.js';

async function capture(level: LogLevel, format: LogFormat, write: (l: ReturnType<typeof createLogger>) => void) {
  const stream = new PassThrough();
  let out = '';
  stream.on('data', (c: Buffer) => (out += c.toString()));
  const logger = createLogger({ level, format, stream, now: () => new Date('2026-11-22T07:21:11.123456Z') });
  write(logger);
  await logger.close();
  return out;
}

describe('createLogger', () => {
  it('writes logrus text lines with sorted, quoted fields', async () => {
    const out = await capture('info', 'text', (l) => {
      l.warn('Listening for gRPC on 0.0.0.0:8081', { b: 'plain', a: 'two words', n: 3 });
      l.info('started');
      l.debug('hidden');
    });
    expect(out).to.equal(
      'time="2026-11-22T07:21:11Z" level=warning msg="Listening for gRPC on 0.0.0.0:8081" a="two words" b=plain n=3\n' +
        'time="2026-11-22T07:21:11Z" level=info msg=started\n',
    );
  });

  it('writes upstream JSON lines with @timestamp, @message and level', async () => {
    const out = await capture('warn', 'json', (l) => {
      l.error('boom', { port: 8080 });
      l.info('hidden');
    });
    const lines = out.trim().split('\n');
    expect(lines).to.have.length(1);
    expect(JSON.parse(lines[0] ?? '')).to.deep.equal({
      '@message': 'boom',
      '@timestamp': '2026-11-22T07:21:11.123Z',
      level: 'error',
      port: 8080,
    });
  });

  it('filters by level in logrus order', async () => {
    const out = await capture('error', 'text', (l) => {
      l.warn('no');
      l.error('yes');
      l.fatal('also');
    });
    expect(
      out
        .split('\n')
        .filter(Boolean)
        .map((s) => s.split(' ')[1]),
    ).to.deep.equal(['level=error', 'level=fatal']);
  });

  it('masks credentials in URLs in messages and fields', async () => {
    expect(maskCredentials('redis://user:pass@host:6379/0')).to.equal('redis://*****@host:6379/0');
    expect(maskCredentials('rediss://:secret@h and http://a@b')).to.equal('rediss://*****@h and http://*****@b');
    expect(maskCredentials('no url here user@host')).to.equal('no url here user@host');
    const out = await capture('info', 'json', (l) => l.info('connecting to redis://u:p@h', { url: 'redis://u:p@h' }));
    expect(out).to.not.contain('u:p');
    expect(JSON.parse(out)).to.include({ '@message': 'connecting to redis://*****@h', url: 'redis://*****@h' });
  });
});
