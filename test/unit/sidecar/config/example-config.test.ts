import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRateLimitConfig } from '../../../../sidecar/config/index.js';
import { desc } from './helpers.js';

const EXAMPLE_DIR = join(import.meta.dirname, '../../../../examples/runtime/ratelimit/config');

describe('examples/runtime/ratelimit/config (used by make run)', () => {
  const names = readdirSync(EXAMPLE_DIR).sort();
  const config = loadRateLimitConfig(
    names.map((name) => ({ name, yaml: readFileSync(join(EXAMPLE_DIR, name), 'utf8') })),
    { mergeDomainConfig: false },
  );

  it('loads every example file', () => {
    expect(names).to.include('example.yaml');
    expect(config.domains).to.deep.equal(['edge', 'speech']);
  });

  it('answers the documented cases', () => {
    expect(config.getLimit('edge', desc('remote_address=10.0.3.4'))!.unlimited).to.equal(true);
    expect(config.getLimit('edge', desc('remote_address=192.168.1.1'))!.requestsPerUnit).to.equal(100);
    expect(config.getLimit('edge', desc('api_key=k', 'path=/v1/login'))!.name).to.equal('login');
    const avatar = config.getLimit('edge', desc('api_key=k', 'path=/v1/users/7/avatar'))!;
    expect([avatar.fullKey, avatar.shareThresholdKeyPatterns]).to.deep.equal([
      'edge.api_key.path_/v1/users/*/avatar',
      [undefined, '/v1/users/*/avatar'],
    ]);
    expect(config.getLimit('edge', desc('api_key=k', 'path=/v1/orders'))!.requestsPerUnit).to.equal(600);
    expect(config.getLimit('edge', desc('api_key=k', 'path=/health'))!.requestsPerUnit).to.equal(60);
    expect(config.getLimit('edge', desc('tenant=t', 'plan=pro'))!.fullKey).to.equal('edge.tenant.plan_pro');
    expect(config.getLimit('edge', desc('tenant=t', 'plan=free'))!.unit).to.equal('WEEK');
    expect(config.getLimit('edge', desc('user_agent=curl/8.1'))!.fullKey).to.equal('edge.user_agent_curl/8.1');
    expect(config.getLimit('speech', desc('workspace=w1', 'operation=synthesis'))!.requestsPerUnit).to.equal(120);
  });
});
