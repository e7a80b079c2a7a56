// The operator against a real kube-apiserver: CRD admission (schema + CEL), watch → ADS → sidecar, status, conflicts, NACKs, restart.
import { expect } from 'chai';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { createKubeClient, KubeApiError, type KubeClient } from '../../../operator/kube/kube-client.js';
import { kubeconfigFromFiles } from '../../../operator/kube/kube-config.js';
import { loadOperatorSettings } from '../../../operator/operator-settings.js';
import { startOperator, type RunningOperator } from '../../../operator/operator.js';
import { sidecarLoadCheck } from '../../../operator/ratelimit/sidecar-load-check.js';
import { parseRateLimitConfigObject } from '../../../operator/ratelimit/ratelimitconfig-parse.js';
import { planSnapshot } from '../../../operator/ratelimit/snapshot-planner.js';
import {
  RateLimitUnit,
  type RateLimitConfig as RateLimitConfigProto,
} from '../../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';
import { systemClock } from '../../../sidecar/clock.js';
import { silentLogger } from '../../../sidecar/logger.js';
import { Sidecar } from './xds-sidecar.js';
import { requireTool, startKubeApiServer, type KubeApiServer } from '../../support/kube-apiserver.js';
import { startProcess } from '../../support/process.js';
import { startRedisServer } from '../../support/redis-server.js';
import { credentials } from '@grpc/grpc-js';
import { RateLimitResponse_Code, RateLimitServiceClient } from '../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { freePort } from '../../support/ports.js';

const RLC = '/apis/chorus.dev/v1alpha1';

function rlc(namespace: string, name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'chorus.dev/v1alpha1', kind: 'RateLimitConfig', metadata: { name, namespace }, spec };
}

function simple(domain: string, rpu = 10, unit = 'minute'): Record<string, unknown> {
  return { domain, descriptors: [{ key: 'path', value: '/x', rateLimit: { unit, requestsPerUnit: rpu } }] };
}

type Status = {
  observedGeneration?: number;
  conditions?: { type: string; status: string; reason: string; message: string }[];
  xds?: {
    sidecars?: { total: number; synced: number; pending: number; rejected: number };
    lastRejection?: { message: string; nodeId: string };
  };
};

function cond(status: Status | undefined, type: string): string {
  const c = status?.conditions?.find((x) => x.type === type);
  return c === undefined ? '' : `${c.status}/${c.reason}`;
}

async function eventually<T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} not reached; last: ${JSON.stringify(last)}`);
}

/** A sidecar in this process: the real xDS source and loader; `transform` simulates an older sidecar. */

/** Like a sidecar built before Jan 2025: WEEK is an unknown enum number, which its loader rejects. */
function withoutWeek(c: RateLimitConfigProto): RateLimitConfigProto {
  const strip = (ds: RateLimitConfigProto['descriptors']): RateLimitConfigProto['descriptors'] =>
    ds.map((d) => ({
      ...d,
      rateLimit:
        d.rateLimit && d.rateLimit.unit === RateLimitUnit.WEEK
          ? { ...d.rateLimit, unit: 70 as RateLimitUnit }
          : d.rateLimit,
      descriptors: strip(d.descriptors),
    }));
  return { ...c, descriptors: strip(c.descriptors) };
}

describe('chorus-operator on a real kube-apiserver', function () {
  this.timeout(180_000);
  let api: KubeApiServer;
  let kube: KubeClient;
  let operator: RunningOperator | undefined;
  let adsPort: number;
  const sidecars: Sidecar[] = [];

  async function start(overrides: Record<string, string> = {}): Promise<RunningOperator> {
    const settings = loadOperatorSettings(
      {
        KUBECONFIG: api.kubeconfigPath,
        ADS_PORT: String(adsPort),
        HTTP_PORT: '0',
        HOST: '127.0.0.1',
        LEADER_ELECTION: 'false',
        STATUS_DEBOUNCE_MS: '100',
        WATCH_NAMESPACES: 'team-a,team-b',
        ...overrides,
      },
      'operator-test',
    );
    return startOperator(settings, { kube, logger: silentLogger, clock: systemClock, loadCheck: sidecarLoadCheck });
  }

  const get = (ns: string, name: string) => kube.request('GET', `${RLC}/namespaces/${ns}/ratelimitconfigs/${name}`);
  const status = async (ns: string, name: string) => (await get(ns, name)).status as Status | undefined;
  const create = (ns: string, name: string, spec: Record<string, unknown>) =>
    kube.request('POST', `${RLC}/namespaces/${ns}/ratelimitconfigs`, rlc(ns, name, spec));

  before(async function () {
    this.timeout(240_000);
    api = await startKubeApiServer(['chorus-operator']);
    kube = createKubeClient(kubeconfigFromFiles(api.kubeconfigPath));
    // `kubectl apply -f crds/`: the checked-in YAML, as is.
    const crd = parse(readFileSync(path.resolve('crds/chorus.dev_ratelimitconfigs.yaml'), 'utf8')) as Record<
      string,
      unknown
    >;
    await kube.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    await eventually(
      () => kube.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ratelimitconfigs.chorus.dev'),
      (c) =>
        ((c.status as { conditions?: { type: string; status: string }[] })?.conditions ?? []).some(
          (x) => x.type === 'Established' && x.status === 'True',
        ),
      'CRD established',
    );
    for (const ns of ['team-a', 'team-b']) {
      await kube.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    }
    // The RLC endpoint can lag the Established condition briefly.
    await eventually(
      () =>
        kube.request('GET', `${RLC}/ratelimitconfigs`).then(
          () => true,
          () => false,
        ),
      (ok) => ok,
      'RLC API',
    );
    adsPort = await freePort();
  });

  after(async () => {
    for (const s of sidecars) s.stop();
    await operator?.stop();
    await api?.stop();
  });

  describe('CRD admission', () => {
    async function rejection(spec: Record<string, unknown>, name = 'bad'): Promise<string> {
      try {
        await kube.request('POST', `${RLC}/namespaces/team-b/ratelimitconfigs?dryRun=All`, rlc('team-b', name, spec));
      } catch (err) {
        expect(err).to.be.instanceOf(KubeApiError);
        expect((err as KubeApiError).code).to.equal('invalid');
        return (err as KubeApiError).message;
      }
      throw new Error('the API server accepted an invalid object');
    }

    it('accepts a valid object and applies defaults', async () => {
      const created = await kube.request(
        'POST',
        `${RLC}/namespaces/team-b/ratelimitconfigs?dryRun=All`,
        rlc('team-b', 'ok', {
          domain: 'd',
          descriptors: [{ key: 'k', rateLimit: { unlimited: true }, descriptors: [] }],
        }),
      );
      const d = (created.spec as { descriptors: Record<string, unknown>[] }).descriptors[0];
      expect(d).to.include({ value: '', shadowMode: false, detailedMetric: false });
    });

    it('rejects unit with unlimited, and a missing unit or requestsPerUnit, with the CEL messages', async () => {
      expect(
        await rejection({ domain: 'd', descriptors: [{ key: 'k', rateLimit: { unlimited: true, unit: 'second' } }] }),
      ).to.contain('unit must not be set when unlimited is true');
      expect(
        await rejection({ domain: 'd', descriptors: [{ key: 'k', rateLimit: { requestsPerUnit: 1 } }] }),
      ).to.contain('unit is required unless unlimited is true');
      expect(await rejection({ domain: 'd', descriptors: [{ key: 'k', rateLimit: { unit: 'hour' } }] })).to.contain(
        'requestsPerUnit is required unless unlimited is true',
      );
    });

    it('rejects a limit that replaces itself, an empty descriptor, duplicate siblings and bad units', async () => {
      const self = { unit: 'hour', requestsPerUnit: 1, name: 'me', replaces: [{ name: 'me' }] };
      expect(await rejection({ domain: 'd', descriptors: [{ key: 'k', rateLimit: self }] })).to.contain(
        'a rate limit must not replace itself',
      );
      expect(await rejection({ domain: 'd', descriptors: [{ key: 'k' }] })).to.contain(
        'a descriptor needs rateLimit or nested descriptors',
      );
      const leaf = { key: 'k', rateLimit: { unit: 'hour', requestsPerUnit: 1 } };
      expect(await rejection({ domain: 'd', descriptors: [leaf, { ...leaf }] })).to.match(/[Dd]uplicate value/);
      expect(
        await rejection({
          domain: 'd',
          descriptors: [{ key: 'k', rateLimit: { unit: 'fortnight', requestsPerUnit: 1 } }],
        }),
      ).to.contain('Unsupported value');
      expect(await rejection({ domain: 'has space', descriptors: [leaf] })).to.contain('spec.domain');
      expect(await rejection({ domain: 'd', descriptors: [] })).to.contain('spec.descriptors');
    });

    it('accepts 5 levels and rejects a 6th level (pruned field is not allowed as unknown)', async () => {
      const deep = (n: number): Record<string, unknown> =>
        n === 1
          ? { key: `l${n}`, rateLimit: { unit: 'second', requestsPerUnit: 1 } }
          : { key: `l${n}`, descriptors: [deep(n - 1)] };
      await kube.request(
        'POST',
        `${RLC}/namespaces/team-b/ratelimitconfigs?dryRun=All`,
        rlc('team-b', 'deep', { domain: 'd', descriptors: [deep(5)] }),
      );
      const created = await kube
        .request(
          'POST',
          `${RLC}/namespaces/team-b/ratelimitconfigs?dryRun=All&fieldValidation=Strict`,
          rlc('team-b', 'deeper', { domain: 'd', descriptors: [deep(6)] }),
        )
        .catch((err: KubeApiError) => err);
      expect(created).to.be.instanceOf(KubeApiError);
    });
  });

  describe('examples/ratelimitconfigs', () => {
    it('are admitted by the API server and pass the operator and sidecar checks', async () => {
      const dir = path.resolve('examples/ratelimitconfigs');
      const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
      expect(files.length).to.be.greaterThan(2);
      for (const file of files) {
        const doc = parse(readFileSync(path.join(dir, file), 'utf8')) as { metadata: { namespace: string } };
        const admitted = await kube.request(
          'POST',
          `${RLC}/namespaces/${doc.metadata.namespace}/ratelimitconfigs?dryRun=All&fieldValidation=Strict`,
          doc,
        );
        const obj = parseRateLimitConfigObject({
          ...admitted,
          metadata: { ...(admitted.metadata as object), creationTimestamp: 't' },
        });
        const plan = planSnapshot({
          objects: [obj],
          globalNamespaces: [],
          quarantine: new Map(),
          sidecars: [],
          maxResourceBytes: 1 << 20,
          loadCheck: sidecarLoadCheck,
        });
        const verdict = [...plan.verdicts.values()][0];
        expect(verdict?.accepted, `${file}: ${verdict?.acceptedMessage}`).to.equal(true);
      }
    });
  });

  describe('operator', () => {
    it('serves an applied CR to a sidecar of its namespace and reports Accepted/Programmed/Synced', async () => {
      operator = await start();
      await create('team-a', 'api', simple('edge'));
      const sidecar = new Sidecar(adsPort, 'team-a/pod-1', 'team-a');
      sidecars.push(sidecar);
      await eventually(
        async () => sidecar.names,
        (n) => n?.includes('team-a/api') === true,
        'sidecar got team-a/api',
      );
      expect(sidecar.domains).to.deep.equal(['edge']);
      const s = await eventually(
        () => status('team-a', 'api'),
        (st) => cond(st, 'Synced') === 'True/Synced',
        'Synced',
      );
      expect(cond(s, 'Accepted')).to.equal('True/Accepted');
      expect(cond(s, 'Programmed')).to.equal('True/Programmed');
      expect(s?.observedGeneration).to.equal(1);
      expect(s?.xds?.sidecars).to.deep.equal({ total: 1, synced: 1, pending: 0, rejected: 0 });
    });

    it('does not rewrite an unchanged status', async () => {
      const before = (await get('team-a', 'api')).metadata as { resourceVersion: string };
      // Several debounce periods (100 ms here) with nothing changing: no periodic rewrites.
      await new Promise((r) => setTimeout(r, 500));
      const after = (await get('team-a', 'api')).metadata as { resourceVersion: string };
      expect(after.resourceVersion).to.equal(before.resourceVersion);
    });

    it('shows the printer columns (kubectl get rlc)', async () => {
      const table = (await kube.request(
        'GET',
        `${RLC}/namespaces/team-a/ratelimitconfigs?includeObject=None`,
        undefined,
        undefined,
        'application/json;as=Table;v=v1;g=meta.k8s.io',
      )) as { columnDefinitions: { name: string; priority: number }[]; rows: { cells: unknown[] }[] };
      const columns = table.columnDefinitions.map((c) => c.name);
      expect(columns).to.deep.equal(['Name', 'Domain', 'Accepted', 'Synced', 'Sidecars', 'Rejected', 'Version', 'Age']);
      const row = table.rows[0]?.cells ?? [];
      expect(row.slice(0, 6)).to.deep.equal(['api', 'edge', 'True', 'True', 1, 0]);
      // spec.domain is a selectable field: kubectl get rlc --field-selector spec.domain=edge
      const selected = await kube.request('GET', `${RLC}/ratelimitconfigs?fieldSelector=spec.domain%3Dedge`);
      expect((selected.items as { metadata: { name: string } }[]).map((i) => i.metadata.name)).to.deep.equal(['api']);
      const none = await kube.request('GET', `${RLC}/ratelimitconfigs?fieldSelector=spec.domain%3Dnope`);
      expect(none.items).to.deep.equal([]);
    });

    it('sends an update as a new config, and a delete removes it', async () => {
      const sidecar = sidecars[0]!;
      const obj = await get('team-a', 'api');
      await kube.request('PUT', `${RLC}/namespaces/team-a/ratelimitconfigs/api`, { ...obj, spec: simple('edge-v2') });
      await eventually(
        async () => sidecar.domains,
        (d) => d.includes('edge-v2'),
        'updated domain',
      );
      const s = await eventually(
        () => status('team-a', 'api'),
        (st) => st?.observedGeneration === 2 && cond(st, 'Synced') === 'True/Synced',
        'gen 2 synced',
      );
      expect(s?.observedGeneration).to.equal(2);
      await create('team-a', 'temp', simple('temp'));
      await eventually(
        async () => sidecar.names,
        (n) => n?.includes('team-a/temp') === true,
        'temp served',
      );
      await kube.request('DELETE', `${RLC}/namespaces/team-a/ratelimitconfigs/temp`);
      await eventually(
        async () => sidecar.names,
        (n) => n !== undefined && !n.includes('team-a/temp') && n.includes('team-a/api'),
        'temp gone',
      );
    });

    it('keeps namespaces apart and marks the younger of two CRs with one domain DomainConflict', async () => {
      await create('team-b', 'other', simple('edge-v2'));
      await create('team-a', 'clash', simple('edge-v2', 5));
      const s = await eventually(
        () => status('team-a', 'clash'),
        (st) => cond(st, 'Accepted') !== '',
        'clash status',
      );
      expect(cond(s, 'Accepted')).to.equal('False/DomainConflict');
      expect(s?.conditions?.find((c) => c.type === 'Accepted')?.message).to.contain('team-a/api');
      const other = await eventually(
        () => status('team-b', 'other'),
        (st) => cond(st, 'Accepted') !== '',
        'other status',
      );
      expect(cond(other, 'Accepted'), 'team-b is another scope').to.equal('True/Accepted');
      expect(sidecars[0]?.names).to.not.include('team-a/clash');
      await kube.request('DELETE', `${RLC}/namespaces/team-a/ratelimitconfigs/clash`);
    });

    it('shows a NACK in the right CR, quarantines it, and keeps the rest flowing', async () => {
      const old = new Sidecar(adsPort, 'team-a/old-pod', 'team-a', withoutWeek);
      sidecars.push(old);
      await eventually(
        async () => old.names,
        (n) => n?.includes('team-a/api') === true,
        'old sidecar synced',
      );
      await create('team-a', 'weekly', simple('weekly', 100, 'week'));
      const s = await eventually(
        () => status('team-a', 'weekly'),
        (st) => cond(st, 'Programmed') === 'False/Quarantined' && st?.xds?.lastRejection !== undefined,
        'weekly quarantined',
      );
      expect(cond(s, 'Synced')).to.equal('False/Rejected');
      expect(s?.xds?.lastRejection?.nodeId).to.equal('team-a/old-pod');
      expect(s?.xds?.lastRejection?.message).to.match(/^team-a\/weekly: .*invalid rate limit unit/);
      expect(old.errors[0]).to.match(/^team-a\/weekly: /);
      // The other CR is untouched and both sidecars converge on the snapshot without the quarantined CR.
      const api = await eventually(
        () => status('team-a', 'api'),
        (st) => st?.xds?.sidecars?.synced === 2,
        'api synced on both',
      );
      expect(cond(api, 'Synced')).to.equal('True/Synced');
      expect(old.names).to.not.include('team-a/weekly');
      // Editing the CR lifts the quarantine (new content gets a new chance); without WEEK it is served.
      const obj = await get('team-a', 'weekly');
      await kube.request('PUT', `${RLC}/namespaces/team-a/ratelimitconfigs/weekly`, {
        ...obj,
        spec: simple('weekly', 100, 'day'),
      });
      await eventually(
        () => status('team-a', 'weekly'),
        (st) => cond(st, 'Synced') === 'True/Synced',
        'weekly synced after the fix',
      );
    });

    it('keeps sidecar config across an operator restart and resyncs', async () => {
      const sidecar = sidecars[0]!;
      const loadsBefore = sidecar.loads;
      const namesBefore = sidecar.names;
      await operator?.stop();
      operator = undefined;
      expect(sidecar.names, 'no empty config while the operator is down').to.deep.equal(namesBefore);
      operator = await start();
      await eventually(
        async () => operator?.ads.sidecars().filter((s) => s.ackedVersion !== undefined).length ?? 0,
        (n) => n === 2,
        'both sidecars ACK the new operator',
      );
      expect(sidecar.loads).to.be.greaterThan(loadsBefore);
      expect(sidecar.names).to.deep.equal(namesBefore);
      const s = await eventually(
        () => status('team-a', 'api'),
        (st) => st?.xds?.sidecars?.synced === 2,
        'still synced',
      );
      expect(cond(s, 'Synced')).to.equal('True/Synced');
    });

    it('serves /healthz, /readyz and /metrics', async () => {
      const port = operator!.httpPort;
      for (const p of ['/healthz', '/readyz'])
        expect((await fetch(`http://127.0.0.1:${port}${p}`)).status).to.equal(200);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).to.match(/chorus_operator_xds_connected_sidecars 2/);
      expect(metrics).to.contain('chorus_operator_xds_acks_total');
    });
  });

  describe('leader election (D4)', () => {
    it('serves ADS only on the leader and hands over, with its sidecars, when the leader stops', async () => {
      await operator?.stop();
      operator = undefined;
      const lease = {
        LEADER_ELECTION: 'true',
        LEASE_NAMESPACE: 'default',
        LEASE_NAME: 'chorus-test',
        LEASE_DURATION_SECONDS: '2',
      };
      const a = await start({ ...lease, POD_NAME: 'op-a' });
      await eventually(
        async () => a.isLeader(),
        (l) => l,
        'op-a leads',
      );
      const b = await start({ ...lease, POD_NAME: 'op-b' });
      try {
        await eventually(
          async () => a.adsPort(),
          (p) => p === adsPort,
          'op-a serves ADS',
        );
        expect(b.isLeader()).to.equal(false);
        expect(b.adsPort(), 'a follower does not serve ADS').to.equal(0);
        const held = await kube.request('GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/chorus-test');
        expect((held.spec as { holderIdentity: string }).holderIdentity).to.equal('op-a');
        await a.stop();
        await eventually(
          async () => b.isLeader() && b.adsPort() === adsPort,
          (ok) => ok,
          'op-b takes over',
          30_000,
        );
        // The sidecars follow to the new leader on the same Service port.
        await eventually(
          async () => b.ads.sidecars().filter((x) => x.ackedVersion !== undefined).length,
          (n) => n === 2,
          'sidecars ACK op-b',
          30_000,
        );
        const after = await kube.request('GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/chorus-test');
        expect((after.spec as { holderIdentity: string }).holderIdentity).to.equal('op-b');
      } finally {
        operator = b;
      }
    });
  });

  describe('upstream Go ratelimit as a sidecar (interop)', () => {
    it('loads the CRs of its namespace from the operator, enforces them, and counts in status', async function () {
      this.timeout(90_000);
      const binary = requireTool('ratelimit');
      const redis = await startRedisServer();
      const [httpPort, grpcPort, debugPort] = [await freePort(), await freePort(), await freePort()];
      const upstream = startProcess(binary, [], {
        env: {
          PATH: process.env.PATH ?? '',
          HOST: '127.0.0.1',
          GRPC_HOST: '127.0.0.1',
          DEBUG_HOST: '127.0.0.1',
          PORT: String(httpPort),
          GRPC_PORT: String(grpcPort),
          DEBUG_PORT: String(debugPort),
          USE_STATSD: 'false',
          REDIS_SOCKET_TYPE: 'tcp',
          REDIS_URL: redis.url,
          CONFIG_TYPE: 'GRPC_XDS_SOTW',
          CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${adsPort}`,
          CONFIG_GRPC_XDS_NODE_ID: 'team-a/upstream-0',
          CONFIG_GRPC_XDS_NODE_METADATA: 'namespace=team-a',
          XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '200ms',
        },
      });
      const rls = new RateLimitServiceClient(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
      try {
        await create('team-a', 'strict', {
          domain: 'strict',
          descriptors: [{ key: 'user', rateLimit: { unit: 'minute', requestsPerUnit: 1 } }],
        });
        const s = await eventually(
          () => status('team-a', 'strict'),
          (st) => st?.xds?.sidecars?.synced === 3,
          'three sidecars synced',
          60_000,
        );
        expect(cond(s, 'Synced')).to.equal('True/Synced');
        const call = () =>
          new Promise<number>((resolve, reject) =>
            rls.shouldRateLimit(
              {
                domain: 'strict',
                descriptors: [{ entries: [{ key: 'user', value: 'u1' }], limit: undefined, hitsAddend: undefined }],
                hitsAddend: 1,
              },
              (err, res) => (err ? reject(err) : resolve(res.overallCode)),
            ),
          );
        expect([await call(), await call()]).to.deep.equal([
          RateLimitResponse_Code.OK,
          RateLimitResponse_Code.OVER_LIMIT,
        ]);
      } catch (err) {
        throw new Error(`${(err as Error).message}\nupstream output:\n${upstream.output().slice(-3000)}`, {
          cause: err,
        });
      } finally {
        rls.close();
        await upstream.stop();
        await redis.stop();
      }
    });
  });

  describe('the chorus-operator process', () => {
    it('starts from the environment, becomes ready, and exits 0 on SIGTERM', async function () {
      this.timeout(90_000);
      const httpPort = await freePort();
      const proc = startProcess(process.execPath, ['--import', 'tsx', path.resolve('operator/main.ts')], {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/root',
          KUBECONFIG: api.kubeconfigPath,
          ADS_PORT: String(await freePort()),
          HTTP_PORT: String(httpPort),
          HOST: '127.0.0.1',
          LEADER_ELECTION: 'false',
          LOG_FORMAT: 'json',
        },
      });
      try {
        await eventually(
          () =>
            fetch(`http://127.0.0.1:${httpPort}/readyz`).then(
              (r) => r.status,
              () => 0,
            ),
          (code) => code === 200,
          'readyz',
          60_000,
        );
        proc.child.kill('SIGTERM');
        const code = await new Promise<number | null>((resolve) => proc.child.once('exit', (c) => resolve(c)));
        expect(code, proc.output()).to.equal(0);
        expect(proc.output()).to.contain('stopping on signal');
      } finally {
        await proc.stop();
      }
    });
  });

  describe('RBAC documented in docs/operator.md', () => {
    it('is enough for a non-admin operator to watch, lead, and write status', async function () {
      this.timeout(90_000);
      const rules = {
        cluster: [
          { apiGroups: ['chorus.dev'], resources: ['ratelimitconfigs'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['chorus.dev'], resources: ['ratelimitconfigs/status'], verbs: ['patch'] },
        ],
        lease: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }],
        pod: [{ apiGroups: [''], resources: ['pods'], verbs: ['patch'] }],
      };
      const rbac = '/apis/rbac.authorization.k8s.io/v1';
      const subject = [{ kind: 'User', name: 'chorus-operator', apiGroup: 'rbac.authorization.k8s.io' }];
      await kube.request('POST', `${rbac}/clusterroles`, {
        metadata: { name: 'chorus-operator' },
        rules: rules.cluster,
      });
      await kube.request('POST', `${rbac}/clusterrolebindings`, {
        metadata: { name: 'chorus-operator' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'chorus-operator' },
        subjects: subject,
      });
      await kube.request('POST', `${rbac}/namespaces/default/roles`, {
        metadata: { name: 'chorus-operator' },
        rules: [...rules.lease, ...rules.pod],
      });
      await kube.request('POST', `${rbac}/namespaces/default/rolebindings`, {
        metadata: { name: 'chorus-operator' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'chorus-operator' },
        subjects: subject,
      });
      await operator?.stop();
      operator = undefined;
      const limitedKube = createKubeClient(kubeconfigFromFiles(api.kubeconfigFor('chorus-operator')));
      const forbidden = await limitedKube.request('GET', '/api/v1/namespaces').catch((err: unknown) => err);
      expect((forbidden as KubeApiError).status, 'the user is not an admin').to.equal(403);
      const settings = loadOperatorSettings(
        {
          ADS_PORT: String(adsPort),
          HTTP_PORT: '0',
          HOST: '127.0.0.1',
          LEADER_ELECTION: 'true',
          LEASE_NAME: 'chorus-rbac',
          LEASE_NAMESPACE: 'default',
          POD_NAME: 'op-rbac',
          POD_NAMESPACE: 'default',
          LEASE_DURATION_SECONDS: '2',
          STATUS_DEBOUNCE_MS: '100',
        },
        'op-rbac',
      );
      operator = await startOperator(settings, {
        kube: limitedKube,
        logger: silentLogger,
        clock: systemClock,
        loadCheck: sidecarLoadCheck,
      });
      await eventually(
        async () => operator?.isLeader() ?? false,
        (l) => l,
        'the limited operator leads',
      );
      await create('team-b', 'rbac-check', simple('rbac'));
      const s = await eventually(
        () => status('team-b', 'rbac-check'),
        (st) => cond(st, 'Accepted') === 'True/Accepted',
        'status written by the limited operator',
      );
      expect(cond(s, 'Programmed')).to.equal('True/Programmed');
    });
  });

  describe('kubeconfig users through @kubernetes/client-node', () => {
    it('authenticates with an exec credential plugin for requests and watches (CA pinned)', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-exec-'));
      try {
        const plugin = path.join(dir, 'plugin.sh');
        const credential = {
          apiVersion: 'client.authentication.k8s.io/v1',
          kind: 'ExecCredential',
          status: { token: api.token },
        };
        writeFileSync(plugin, `#!/bin/sh\necho '${JSON.stringify(credential)}'\n`);
        chmodSync(plugin, 0o755);
        const file = path.join(dir, 'kubeconfig');
        writeFileSync(
          file,
          stringify({
            apiVersion: 'v1',
            kind: 'Config',
            clusters: [
              { name: 'k', cluster: { server: api.url, 'certificate-authority-data': api.ca.toString('base64') } },
            ],
            users: [
              {
                name: 'e',
                user: {
                  exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' },
                },
              },
            ],
            contexts: [{ name: 'k', context: { cluster: 'k', user: 'e' } }],
            'current-context': 'k',
          }),
        );
        const viaExec = createKubeClient(kubeconfigFromFiles(file));
        const list = await viaExec.request('GET', `${RLC}/ratelimitconfigs`);
        expect((list.items as unknown[]).length).to.be.greaterThan(0);
        const seen: string[] = [];
        const controller = new AbortController();
        // Without a resourceVersion the server replays existing objects as ADDED, then closes after timeoutSeconds.
        await viaExec.watch(
          `${RLC}/ratelimitconfigs?watch=1&timeoutSeconds=2`,
          (e) => seen.push(e.type),
          controller.signal,
        );
        expect(seen.length).to.equal((list.items as unknown[]).length);
        expect(new Set(seen)).to.deep.equal(new Set(['ADDED']));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
