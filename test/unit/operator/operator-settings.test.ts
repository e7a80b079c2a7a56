// Operator settings: defaults of the documented process interface and typed errors for bad values.
import { expect } from 'chai';
import { loadOperatorSettings, SettingsError } from '../../../operator/operator-settings.js';

describe('operator settings', () => {
  it('has the documented defaults', () => {
    const s = loadOperatorSettings({ POD_NAMESPACE: 'chorus-system' }, 'host-1');
    expect(s).to.include({
      adsPort: 18000,
      httpPort: 8081,
      leaderElection: true,
      leaseName: 'chorus-operator',
      leaseNamespace: 'chorus-system',
      podName: 'host-1',
      logLevel: 'info',
      logFormat: 'text',
    });
    expect(s.watchNamespaces).to.deep.equal([]);
  });

  it('parses lists and overrides', () => {
    const s = loadOperatorSettings(
      {
        WATCH_NAMESPACES: 'a, b,,c',
        GLOBAL_NAMESPACES: 'shared',
        LEADER_ELECTION: 'false',
        LEASE_NAMESPACE: 'x',
        LOG_FORMAT: 'JSON',
      },
      'h',
    );
    expect(s.watchNamespaces).to.deep.equal(['a', 'b', 'c']);
    expect(s.globalNamespaces).to.deep.equal(['shared']);
    expect([s.leaderElection, s.leaseNamespace, s.logFormat]).to.deep.equal([false, 'x', 'json']);
  });

  it('rejects bad values naming the variable', () => {
    for (const [env, variable] of [
      [{ ADS_PORT: 'http' }, 'ADS_PORT'],
      [{ HTTP_PORT: '70000' }, 'HTTP_PORT'],
      [{ LEADER_ELECTION: 'maybe' }, 'LEADER_ELECTION'],
      [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
      [{ ADS_TLS_CERT: '/c.pem' }, 'ADS_TLS_CERT'],
      [{ ADS_TLS_CLIENT_CA: '/ca.pem' }, 'ADS_TLS_CLIENT_CA'],
    ] as const) {
      expect(() => loadOperatorSettings(env, 'h'))
        .to.throw(SettingsError)
        .with.property('variable', variable);
    }
  });
});
