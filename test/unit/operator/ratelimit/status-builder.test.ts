// Status from verdicts and sidecar state: conditions, counts, last rejection, node sample, transition times.
import { expect } from 'chai';
import type { RateLimitConfigObject } from '../../../../operator/crd/ratelimitconfig-types.js';
import { planSnapshot } from '../../../../operator/ratelimit/snapshot-planner.js';
import { buildStatus, sameJson, type StatusSidecar } from '../../../../operator/ratelimit/status-builder.js';

const obj: RateLimitConfigObject = {
  namespace: 'a',
  name: 'x',
  uid: 'u',
  generation: 3,
  resourceVersion: '9',
  creationTimestamp: '2026-01-01T00:00:00Z',
  spec: {
    domain: 'd',
    descriptors: [
      {
        key: 'k',
        value: '',
        rateLimit: { unit: 'second', requestsPerUnit: 1, unlimited: false, replaces: [] },
        shadowMode: false,
        detailedMetric: false,
        quotaMode: false,
        descriptors: [],
      },
    ],
  },
  parseError: '',
  status: {},
};
const verdict = planSnapshot({
  objects: [obj],
  globalNamespaces: [],
  quarantine: new Map(),
  sidecars: [],
  maxResourceBytes: 1 << 20,
}).verdicts.get('a/x')!;
const hash = verdict.resource!.contentHash;
const side = (nodeId: string, extra: Partial<StatusSidecar> = {}): StatusSidecar => ({
  nodeId,
  inScope: true,
  ackedHash: hash,
  ackedVersion: 'v1',
  rejection: undefined,
  ...extra,
});
const now = '2026-02-02T00:00:00Z';

function cond(status: ReturnType<typeof buildStatus>, type: string) {
  return status.conditions?.find((c) => c.type === type);
}

describe('status builder', () => {
  it('is Synced when every sidecar in scope ACKed a version carrying this content', () => {
    const s = buildStatus({
      obj,
      verdict,
      sidecars: [side('n1'), side('n2'), side('far', { inScope: false, ackedHash: undefined })],
      snapshotVersion: 'v1',
      nowIso: now,
    });
    expect(s.observedGeneration).to.equal(3);
    expect(cond(s, 'Accepted')?.status).to.equal('True');
    expect(cond(s, 'Programmed')?.reason).to.equal('Programmed');
    expect(cond(s, 'Synced')).to.include({ status: 'True', reason: 'Synced', observedGeneration: 3 });
    expect(s.xds?.sidecars).to.deep.equal({ total: 2, synced: 2, pending: 0, rejected: 0 });
    expect(s.xds?.resourceName).to.equal('a/x');
    expect(s.xds?.snapshotVersion).to.equal('v1');
  });

  it('counts pending and rejected sidecars, keeps the newest rejection, and samples nodes worst first, once per node id', () => {
    const s = buildStatus({
      obj,
      verdict,
      sidecars: [
        side('ok'),
        side('old', { ackedHash: 'other' }),
        side('bad', {
          rejection: { version: 'v2', message: 'a/x: invalid', timeMs: Date.parse('2026-02-01T00:00:00Z') },
        }),
        side('shared'),
        side('shared', { ackedHash: undefined }),
      ],
      snapshotVersion: 'v2',
      nowIso: now,
    });
    expect(s.xds?.sidecars).to.deep.equal({ total: 5, synced: 2, pending: 2, rejected: 1 });
    expect(cond(s, 'Synced')).to.include({ status: 'False', reason: 'Rejected' });
    expect(s.xds?.lastRejection).to.deep.equal({
      nodeId: 'bad',
      version: 'v2',
      message: 'a/x: invalid',
      time: '2026-02-01T00:00:00Z',
    });
    expect(s.xds?.nodes?.map((n) => `${n.nodeId}:${n.state}`)).to.deep.equal([
      'bad:Rejected',
      'old:Pending',
      'shared:Pending',
      'ok:Synced',
    ]);
  });

  it('says NoSidecars (Unknown) with nobody connected, and keeps transition times while a status holds', () => {
    const first = buildStatus({ obj, verdict, sidecars: [], snapshotVersion: 'v1', nowIso: now });
    expect(cond(first, 'Synced')).to.include({ status: 'Unknown', reason: 'NoSidecars' });
    const later = buildStatus({
      obj: { ...obj, status: first },
      verdict,
      sidecars: [],
      snapshotVersion: 'v1',
      nowIso: '2027-01-01T00:00:00Z',
    });
    expect(cond(later, 'Accepted')?.lastTransitionTime).to.equal(now);
    expect(sameJson(first, later)).to.equal(true);
  });

  it('reports a quarantined CR as Programmed=False/Quarantined and Synced=False/Rejected', () => {
    const q = {
      ...verdict,
      programmed: false,
      programmedReason: 'Quarantined' as const,
      programmedMessage: 'left out: a/x: boom',
    };
    const s = buildStatus({
      obj,
      verdict: q,
      sidecars: [side('n', { ackedHash: undefined })],
      snapshotVersion: undefined,
      nowIso: now,
    });
    expect(cond(s, 'Programmed')).to.include({ status: 'False', reason: 'Quarantined' });
    expect(cond(s, 'Synced')).to.include({ status: 'False', reason: 'Rejected' });
  });
});
