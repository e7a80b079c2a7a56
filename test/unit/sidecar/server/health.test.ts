// Health components shared by /healthcheck and gRPC health.
import { expect } from 'chai';
import { createHealth } from '../../../../sidecar/health.js';

describe('health components', () => {
  it('starts unhealthy only for a backend that must report (Redis) and for the config component', () => {
    expect(createHealth({ backendStartsHealthy: true, requireConfig: false }).isHealthy()).to.equal(true);
    expect(createHealth({ backendStartsHealthy: false, requireConfig: false }).isHealthy()).to.equal(false);
    const withConfig = createHealth({ backendStartsHealthy: true, requireConfig: true });
    expect(withConfig.components()).to.deep.equal({ backend: true, config: false, sigterm: true });
    withConfig.set('config', true);
    expect(withConfig.isHealthy()).to.equal(true);
  });

  it('is healthy only when every enabled component is, and reports changes once', () => {
    const health = createHealth({ backendStartsHealthy: false, requireConfig: false });
    const seen: boolean[] = [];
    const unsubscribe = health.onChange((h) => seen.push(h));
    health.set('config', false); // not enabled: ignored
    health.set('backend', true);
    health.set('backend', true);
    health.set('sigterm', false);
    health.set('backend', false);
    health.set('sigterm', true);
    unsubscribe();
    health.set('backend', true);
    expect(seen).to.deep.equal([true, false]);
    expect(health.components()).to.deep.equal({ backend: true, sigterm: true });
    expect(health.isHealthy()).to.equal(true);
  });
});
