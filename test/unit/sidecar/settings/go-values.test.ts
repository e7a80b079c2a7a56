// Parsers for Go value syntax (strconv, time.ParseDuration, envconfig maps and lists).
import { expect } from 'chai';
import {
  parseGoBool,
  parseGoDurationMs,
  parseGoFloat,
  parseGoInt,
  parseGoList,
  parseGoMap,
} from '../../../../sidecar/settings/go-values.js';

describe('Go value parsers', () => {
  it('parses booleans like strconv.ParseBool', () => {
    for (const t of ['1', 't', 'T', 'TRUE', 'true', 'True']) expect(parseGoBool(t), t).to.equal(true);
    for (const f of ['0', 'f', 'F', 'FALSE', 'false', 'False']) expect(parseGoBool(f), f).to.equal(false);
    for (const bad of ['', 'yes', 'tRUE', ' true', 'on', '2']) expect(parseGoBool(bad), bad).to.equal(undefined);
  });

  it('parses integers like strconv.ParseInt base 0', () => {
    expect(parseGoInt('8080')).to.equal(8080);
    expect(parseGoInt('-5')).to.equal(-5);
    expect(parseGoInt('+7')).to.equal(7);
    expect(parseGoInt('0')).to.equal(0);
    expect(parseGoInt('0x1F')).to.equal(31);
    expect(parseGoInt('0o17')).to.equal(15);
    expect(parseGoInt('017')).to.equal(15);
    expect(parseGoInt('0b101')).to.equal(5);
    expect(parseGoInt('1_000')).to.equal(1000);
    for (const bad of ['', 'abc', '1.5', '08', '1__0', '_1', '1_', '0x', ' 1', '1e3', '99999999999999999999']) {
      expect(parseGoInt(bad), bad).to.equal(undefined);
    }
  });

  it('parses floats like strconv.ParseFloat', () => {
    expect(parseGoFloat('0.8')).to.equal(0.8);
    expect(parseGoFloat('.5')).to.equal(0.5);
    expect(parseGoFloat('1e-3')).to.equal(0.001);
    expect(parseGoFloat('2')).to.equal(2);
    expect(parseGoFloat('-1.25')).to.equal(-1.25);
    expect(parseGoFloat('Inf')).to.equal(Infinity);
    expect(Number.isNaN(parseGoFloat('NaN'))).to.equal(true);
    for (const bad of ['', 'abc', '1.2.3', '0.8x', ' 1']) expect(parseGoFloat(bad), bad).to.equal(undefined);
  });

  it('parses durations like time.ParseDuration', () => {
    expect(parseGoDurationMs('10s')).to.equal(10_000);
    expect(parseGoDurationMs('1h2m3.5s')).to.equal(3_723_500);
    expect(parseGoDurationMs('150ms')).to.equal(150);
    expect(parseGoDurationMs('150us')).to.be.closeTo(0.15, 1e-12);
    expect(parseGoDurationMs('150µs')).to.be.closeTo(0.15, 1e-12);
    expect(parseGoDurationMs('150μs')).to.be.closeTo(0.15, 1e-12);
    expect(parseGoDurationMs('2000000ns')).to.be.closeTo(2, 1e-9);
    expect(parseGoDurationMs('0')).to.equal(0);
    expect(parseGoDurationMs('-1.5h')).to.equal(-5_400_000);
    expect(parseGoDurationMs('.5s')).to.equal(500);
    expect(parseGoDurationMs('24h')).to.equal(86_400_000);
    for (const bad of ['', '10', '1d', 's', '.s', '1.5', 'abc', '1h 2m', '-', '5S']) {
      expect(parseGoDurationMs(bad), bad).to.equal(undefined);
    }
  });

  it('parses envconfig maps and lists', () => {
    expect(parseGoMap('')).to.deep.equal({});
    expect(parseGoMap('a:1,b:2')).to.deep.equal({ a: '1', b: '2' });
    expect(parseGoMap('url:http://x:80')).to.deep.equal({ url: 'http://x:80' });
    expect(parseGoMap('a:1,b')).to.equal(undefined);
    expect(parseGoList('')).to.deep.equal([]);
    expect(parseGoList('a,b')).to.deep.equal(['a', 'b']);
  });
});
