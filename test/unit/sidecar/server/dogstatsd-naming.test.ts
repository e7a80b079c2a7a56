// DogStatsD names and tags: gostats-serialised tags first, then the first matching mogrifier.
import { expect } from 'chai';
import { createDogStatNamer } from '../../../../sidecar/stats/dogstatsd-sink.js';

describe('DogStatsD naming', () => {
  it('turns serialised gostats tags into dog tags', () => {
    const namer = createDogStatNamer([]);
    expect(namer('ratelimit.service.rate_limit.d.k.total_hits.__COMMIT=12345.__DEPLOY=67890')).to.deep.equal({
      name: 'ratelimit.service.rate_limit.d.k.total_hits',
      tags: ['COMMIT:12345', 'DEPLOY:67890'],
    });
    expect(namer('plain.name')).to.deep.equal({ name: 'plain.name', tags: [] });
  });

  it('applies the first matching mogrifier with $n substitution', () => {
    const namer = createDogStatNamer([
      {
        name: 'RL',
        pattern: '^ratelimit\\.service\\.rate_limit\\.([^.]+)\\.(.*)\\.([^.]+)$',
        metricName: 'ratelimit.service.rate_limit.$3',
        tags: { domain: '$1', descriptor: '$2', missing: '$9' },
      },
      { name: 'ALL', pattern: '.*', metricName: 'never.$0', tags: {} },
    ]);
    expect(namer('ratelimit.service.rate_limit.mongo.db_users.over_limit.__env=prod')).to.deep.equal({
      name: 'ratelimit.service.rate_limit.over_limit',
      tags: ['env:prod', 'domain:mongo', 'descriptor:db_users', 'missing:$9'],
    });
    expect(namer('other.stat').name).to.equal('never.other.stat');
  });
});
