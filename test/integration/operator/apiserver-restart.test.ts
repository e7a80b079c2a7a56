// The operator across a kube-apiserver restart (etcd keeps running): sidecars keep their config, ADS streams stay, watches resync.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { createKubeClient, type KubeClient } from '../../../operator/kube/kube-client.js';
import { kubeconfigFromFiles } from '../../../operator/kube/kube-config.js';
import { loadOperatorSettings } from '../../../operator/operator-settings.js';
import { startOperator, type RunningOperator } from '../../../operator/operator.js';
import { sidecarLoadCheck } from '../../../operator/ratelimit/sidecar-load-check.js';
import { systemClock } from '../../../sidecar/clock.js';
import { silentLogger } from '../../../sidecar/logger.js';
import { Sidecar } from './xds-sidecar.js';
import { startKubeApiServer, type KubeApiServer } from '../../support/kube-apiserver.js';
import { freePort } from '../../support/ports.js';

// The helpers below mirror operator-kube.test.ts: importing that file would register (and run) all of its suites here.
const RLC = '/apis/chorus.dev/v1alpha1';

type Status = {
  observedGeneration?: number;
  conditions?: { type: string; status: string; reason: string }[];
  xds?: { sidecars?: { total: number; synced: number; pending: number; rejected: number } };
};

function cond(status: Status | undefined, type: string): string {
  const c = status?.conditions?.find((x) => x.type === type);
  return c === undefined ? '' : `${c.status}/${c.reason}`;
}

function rlc(name: string, domain: string, rpu: number): Record<string, unknown> {
  return {
    apiVersion: 'chorus.dev/v1alpha1',
    kind: 'RateLimitConfig',
    metadata: { name, namespace: 'team-a' },
    spec: { domain, descriptors: [{ key: 'path', value: '/x', rateLimit: { unit: 'minute', requestsPerUnit: rpu } }] },
  };
}

async function eventually<T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError = '';
  while (Date.now() < deadline) {
    try {
      last = await read();
      if (ok(last)) return last;
    } catch (err) {
      // Right after a restart a request can still race the server's readiness; keep polling until the deadline.
      lastError = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} not reached; last: ${JSON.stringify(last)} ${lastError}`);
}

/** A sidecar in this process: the real xDS config source and loader, recording what it loaded. */

describe('chorus-operator across a kube-apiserver restart', function () {
  this.timeout(180_000);
  let api: KubeApiServer | undefined;
  let kube: KubeClient;
  let operator: RunningOperator | undefined;
  let sidecar: Sidecar | undefined;
  let late: Sidecar | undefined;
  let adsPort: number;

  const get = (name: string) => kube.request('GET', `${RLC}/namespaces/team-a/ratelimitconfigs/${name}`);
  const status = async (name: string) => (await get(name)).status as Status | undefined;
  const streams = (op: RunningOperator): string[] =>
    op.ads
      .sidecars()
      .map((s) => `${s.nodeId}#${s.streamId}`)
      .sort();

  before(async function () {
    this.timeout(240_000);
    api = await startKubeApiServer();
    kube = createKubeClient(kubeconfigFromFiles(api.kubeconfigPath));
    const crd = parse(readFileSync(path.resolve('crds/chorus.dev_ratelimitconfigs.yaml'), 'utf8')) as Record<
      string,
      unknown
    >;
    await kube.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    await kube.request('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-a' },
    });
    // Established can precede the RLC endpoint; creating the first CR is the real readiness check.
    await eventually(
      () => kube.request('POST', `${RLC}/namespaces/team-a/ratelimitconfigs`, rlc('api', 'edge', 10)),
      () => true,
      'first CR created',
    );
    adsPort = await freePort();
    const settings = loadOperatorSettings(
      {
        KUBECONFIG: api.kubeconfigPath,
        ADS_PORT: String(adsPort),
        HTTP_PORT: '0',
        HOST: '127.0.0.1',
        LEADER_ELECTION: 'false',
        STATUS_DEBOUNCE_MS: '100',
        WATCH_NAMESPACES: 'team-a',
      },
      'operator-test',
    );
    operator = await startOperator(settings, {
      kube,
      logger: silentLogger,
      clock: systemClock,
      loadCheck: sidecarLoadCheck,
    });
    sidecar = new Sidecar(adsPort, 'team-a/pod-1', 'team-a');
    await eventually(
      () => status('api'),
      (st) => cond(st, 'Synced') === 'True/Synced' && st?.xds?.sidecars?.synced === 1,
      'team-a/api synced before the restart',
    );
  });

  after(async () => {
    sidecar?.stop();
    late?.stop();
    await operator?.stop();
    await api?.stop();
  });

  it('keeps the sidecar config and ADS stream while the API server is down, then serves CRs written after it', async () => {
    const op = operator!;
    const sc = sidecar!;
    expect(sc.names).to.deep.equal(['team-a/api']);
    const streamsBefore = streams(op);
    expect(streamsBefore).to.have.length(1);
    const loadsBefore = sc.loads;

    await api!.restartApiServer(async () => {
      // The server really is down: the operator's own client cannot reach it.
      let down = false;
      await kube.request('GET', `${RLC}/namespaces/team-a/ratelimitconfigs/api`).catch(() => {
        down = true;
      });
      expect(down, 'kube-apiserver still answers after stop').to.equal(true);
      // Long enough for the informer to see its watch end and fail at least one re-list/re-watch.
      await new Promise((r) => setTimeout(r, 3000));
      expect(sc.names, 'no empty config while the API server is down').to.deep.equal(['team-a/api']);
      expect(sc.domains).to.deep.equal(['edge']);
      expect(sc.errors).to.deep.equal([]);
      expect(streams(op), 'ADS streams survive the API server going away').to.deep.equal(streamsBefore);
      const health = await fetch(`http://127.0.0.1:${op.httpPort}/healthz`);
      expect(health.status, 'operator still alive').to.equal(200);
      // A sidecar that starts now is served from the operator's cache; its status write has to wait for the server.
      late = new Sidecar(adsPort, 'team-a/pod-2', 'team-a');
      await eventually(
        async () => late?.names,
        (n) => n?.includes('team-a/api') === true,
        'a sidecar started while the API server is down gets the last config',
        20_000,
      );
    });

    // The status write that failed while the server was down is made once it is back, with no CR change to prompt it
    // (today the informer's re-list after 410 Gone does: the new server's watch cache starts past our resourceVersion).
    const resynced = await eventually(
      () => status('api'),
      (st) => st?.xds?.sidecars?.synced === 2,
      'status of team-a/api counts the sidecar that joined during the outage',
    );
    expect(resynced?.observedGeneration).to.equal(1);
    expect(cond(resynced, 'Synced')).to.equal('True/Synced');

    // An update of the existing CR and a new CR, both written after the restart, reach the sidecar.
    const existing = await get('api');
    await kube.request('PUT', `${RLC}/namespaces/team-a/ratelimitconfigs/api`, {
      ...existing,
      spec: rlc('api', 'edge-v2', 20).spec,
    });
    await kube.request('POST', `${RLC}/namespaces/team-a/ratelimitconfigs`, rlc('late', 'late', 5));
    await eventually(
      async () => [...sc.domains].sort().join(','),
      (d) => d === 'edge-v2,late',
      'sidecar loads the CRs written after the restart',
    );
    expect([...(sc.names ?? [])].sort()).to.deep.equal(['team-a/api', 'team-a/late']);
    expect(sc.loads).to.be.greaterThan(loadsBefore);
    expect(sc.errors).to.deep.equal([]);

    for (const [name, generation] of [
      ['late', 1],
      ['api', 2],
    ] as const) {
      const s = await eventually(
        () => status(name),
        (st) =>
          st?.observedGeneration === generation &&
          cond(st, 'Synced') === 'True/Synced' &&
          st.xds?.sidecars?.synced === 2,
        `status of team-a/${name} written after the restart`,
      );
      expect(cond(s, 'Accepted')).to.equal('True/Accepted');
      expect(cond(s, 'Programmed')).to.equal('True/Programmed');
    }
    expect(
      streams(op).filter((s) => s.startsWith('team-a/pod-1#')),
      'the same ADS stream served the resync',
    ).to.deep.equal(streamsBefore);
  });

  it('still rejects an invalid CR after the restart (the CRD schema came back from etcd)', async () => {
    let message = '';
    try {
      await kube.request('POST', `${RLC}/namespaces/team-a/ratelimitconfigs`, {
        ...rlc('bad', 'bad', 1),
        spec: { domain: 'bad', descriptors: [{ key: 'k', rateLimit: { requestsPerUnit: 1 } }] },
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.contain('unit is required unless unlimited is true');
    expect(sidecar!.names).to.not.include('team-a/bad');
  });
});
