import { expect } from 'chai';
import { compileWildcard } from '../../../../sidecar/config/wildcard.js';

describe('compileWildcard', () => {
  const matches = (pattern: string, text: string): boolean => compileWildcard(pattern).matches(text);

  it('anchors the first segment as a prefix and the last as a suffix', () => {
    expect(matches('k_foo*', 'k_foobar')).to.equal(true);
    expect(matches('k_foo*', 'x_foobar')).to.equal(false);
    expect(matches('k_*bar', 'k_foobar')).to.equal(true);
    expect(matches('k_*bar', 'k_barfoo')).to.equal(false);
  });

  it('lets * match zero characters without overlapping prefix and suffix', () => {
    expect(matches('k_a*a', 'k_aa')).to.equal(true);
    expect(matches('k_a*a', 'k_a')).to.equal(false);
    expect(matches('*', '')).to.equal(true);
    expect(matches('k_**', 'k_')).to.equal(true);
  });

  it('finds middle segments in order', () => {
    expect(matches('p_/a/*/b/*/c', 'p_/a/1/b/2/c')).to.equal(true);
    expect(matches('p_/a/*/b/*/c', 'p_/a/1/c/2/b')).to.equal(false);
    expect(matches('p_*x*y*', 'p_yx')).to.equal(false);
    expect(matches('p_*x*y*', 'p_xy')).to.equal(true);
    expect(matches('p_*ab*ab', 'p_ab')).to.equal(false);
    expect(matches('p_*ab*ab', 'p_abab')).to.equal(true);
  });
});
