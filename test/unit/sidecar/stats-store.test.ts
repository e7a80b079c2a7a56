import { expect } from 'chai';
import { StatsStore, nameWithTags } from '../../../sidecar/stats/stats-store.js';

describe('StatsStore', () => {
  it('returns the same counter for the same name and adds up', () => {
    const store = new StatsStore();
    store.counter('a.b').add(2);
    store.counter('a.b').inc();
    expect(store.counter('a.b').value()).to.equal(3);
  });

  it('serialises extra tags into names like gostats, sorted by key', () => {
    expect(nameWithTags('x', { b: '2', a: '1' })).to.equal('x.__a=1.__b=2');
    const store = new StatsStore({ env: 'prod' });
    expect(store.counter('ratelimit.service.config_load_success').name).to.equal(
      'ratelimit.service.config_load_success.__env=prod',
    );
  });

  it('drains timer samples once', () => {
    const store = new StatsStore();
    const t = store.timer('t');
    t.recordMs(5);
    t.recordMs(7);
    expect(t.drain()).to.deep.equal([5, 7]);
    expect(t.drain()).to.deep.equal([]);
    expect(t.count()).to.equal(2);
  });
});
