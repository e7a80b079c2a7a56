// Planning: invalid specs, the sidecar-mirroring checks, domain conflicts (D2), features (D6), size, quarantine.
import { expect } from 'chai';
import type { DescriptorSpec, RateLimitConfigObject } from '../../../../operator/crd/ratelimitconfig-types.js';
import { planSnapshot, type PlanInput, type SpecOutcome } from '../../../../operator/ratelimit/snapshot-planner.js';
import { validateSpec } from '../../../../operator/ratelimit/validate-spec.js';

function d(key: string, extra: Partial<DescriptorSpec> = {}): DescriptorSpec {
  return {
    key,
    value: '',
    rateLimit: { unit: 'second', requestsPerUnit: 1, unlimited: false, replaces: [] },
    shadowMode: false,
    detailedMetric: false,
    quotaMode: false,
    descriptors: [],
    ...extra,
  };
}

function cr(
  namespace: string,
  name: string,
  domain: string,
  created: string,
  descriptors = [d('k')],
): RateLimitConfigObject {
  return {
    namespace,
    name,
    uid: `${namespace}-${name}`,
    generation: 1,
    resourceVersion: '1',
    creationTimestamp: created,
    spec: { domain, descriptors },
    parseError: '',
    status: {},
  };
}

function input(objects: RateLimitConfigObject[], extra: Partial<PlanInput> = {}): PlanInput {
  return { objects, globalNamespaces: [], quarantine: new Map(), sidecars: [], maxResourceBytes: 1 << 20, ...extra };
}

describe('snapshot planner', () => {
  it('reuses the spec-only work while uid and generation stay, and redoes it when either changes', () => {
    const memo = new Map<string, SpecOutcome>();
    let checks = 0;
    const loadCheck = (): string | undefined => {
      checks += 1;
      return checks === 3 ? 'a/x: rejected by the loader' : undefined;
    };
    const x = cr('a', 'x', 'd1', '2026-01-01T00:00:00Z');
    planSnapshot(input([x], { memo, loadCheck }));
    const again = planSnapshot(
      input([{ ...x, resourceVersion: '2', status: { observedGeneration: 1 } }], { memo, loadCheck }),
    );
    expect(checks, 'a status-only change reuses the outcome').to.equal(1);
    expect(again.resources.map((r) => r.name)).to.deep.equal(['a/x']);
    planSnapshot(input([{ ...x, generation: 2 }], { memo, loadCheck }));
    const recreated = planSnapshot(input([{ ...x, generation: 2, uid: 'other' }], { memo, loadCheck }));
    expect(checks).to.equal(3);
    expect(recreated.verdicts.get('a/x')?.acceptedReason, 'the new outcome is used, not the memo').to.equal('Invalid');
    planSnapshot(input([{ ...x, generation: 0 }], { memo, loadCheck }));
    planSnapshot(input([{ ...x, generation: 0 }], { memo, loadCheck }));
    expect(checks, 'no generation: never reused').to.equal(5);
  });

  it('serves valid CRs and names them <namespace>/<name>', () => {
    const plan = planSnapshot(
      input([cr('a', 'x', 'd1', '2026-01-01T00:00:00Z'), cr('b', 'y', 'd2', '2026-01-01T00:00:00Z')]),
    );
    expect(plan.resources.map((r) => r.name)).to.deep.equal(['a/x', 'b/y']);
    expect(plan.verdicts.get('a/x')?.programmedReason).to.equal('Programmed');
  });

  it('lets the oldest CR keep a domain in one namespace; the younger is DomainConflict', () => {
    const plan = planSnapshot(
      input([cr('a', 'young', 'same', '2026-01-02T00:00:00Z'), cr('a', 'old', 'same', '2026-01-01T00:00:00Z')]),
    );
    expect(plan.resources.map((r) => r.name)).to.deep.equal(['a/old']);
    const v = plan.verdicts.get('a/young');
    expect(v?.acceptedReason).to.equal('DomainConflict');
    expect(v?.acceptedMessage).to.contain('a/old');
  });

  it('breaks creation-time ties by namespace/name, and only conflicts within a scope or with a global namespace', () => {
    const t = '2026-01-01T00:00:00Z';
    const plan = planSnapshot(
      input(
        [
          cr('a', 'b', 'same', t),
          cr('a', 'a', 'same', t),
          cr('other', 'z', 'same', t),
          cr('g', 'g', 'gd', t),
          cr('x', 'x', 'gd', t),
        ],
        {
          globalNamespaces: ['g'],
        },
      ),
    );
    expect(plan.verdicts.get('a/a')?.accepted).to.equal(true);
    expect(plan.verdicts.get('a/b')?.acceptedReason).to.equal('DomainConflict');
    expect(plan.verdicts.get('other/z')?.accepted, 'another namespace is another scope').to.equal(true);
    expect(plan.verdicts.get('x/x')?.acceptedReason, 'a global CR reaches every scope').to.equal('DomainConflict');
  });

  it('rejects what the sidecar would NACK, with its wording', () => {
    const bad = [
      d('a_b'),
      d('a', { value: 'b' }),
      d('u', { rateLimit: { unit: 'second', unlimited: true, replaces: [] } }),
      d('n', { rateLimit: { unlimited: false, requestsPerUnit: 1, replaces: [] } }),
      d('r', {
        rateLimit: { unit: 'hour', requestsPerUnit: 1, unlimited: false, name: 'me', replaces: [{ name: 'me' }] },
      }),
      d('', {}),
    ];
    const messages = validateSpec({ domain: '', descriptors: bad }).map((p) => p.message);
    expect(messages).to.deep.equal([
      'config file cannot have empty domain',
      "duplicate descriptor composite key 'a_b' (also at spec.descriptors[0])",
      'should not specify rate limit unit when unlimited',
      'invalid rate limit unit',
      "rate limit 'me' replaces itself",
      'descriptor has empty key',
    ]);
    const plan = planSnapshot(input([cr('a', 'x', 'd', '2026-01-01T00:00:00Z', bad)]));
    expect(plan.resources).to.deep.equal([]);
    expect(plan.verdicts.get('a/x')?.acceptedReason).to.equal('Invalid');
  });

  it('rejects duplicate rate limit names within one CR, at any depth', () => {
    const named = (key: string) =>
      d(key, { rateLimit: { unit: 'minute', requestsPerUnit: 1, unlimited: false, name: 'dup', replaces: [] } });
    const problems = validateSpec({
      domain: 'x',
      descriptors: [named('a'), d('b', { rateLimit: undefined, descriptors: [named('c')] })],
    });
    expect(problems.map((p) => p.path)).to.deep.equal(['spec.descriptors[1].descriptors[0].rateLimit.name']);
  });

  it('reports an unparsable spec as Invalid with the parse error', () => {
    const broken: RateLimitConfigObject = {
      ...cr('a', 'x', 'd', 't'),
      spec: undefined,
      parseError: 'spec.domain: must be a string',
    };
    expect(planSnapshot(input([broken])).verdicts.get('a/x')?.acceptedMessage).to.equal(
      'spec.domain: must be a string',
    );
  });

  it('runs the sidecar loader check and rejects on its message', () => {
    const plan = planSnapshot(input([cr('a', 'x', 'd', 't')], { loadCheck: (r) => `${r.name}: nope` }));
    expect(plan.verdicts.get('a/x')?.acceptedMessage).to.equal('a/x: nope');
  });

  it('rejects a CR over the size budget as TooLarge', () => {
    const plan = planSnapshot(input([cr('a', 'x', 'd', 't')], { maxResourceBytes: 5 }));
    expect(plan.verdicts.get('a/x')?.acceptedReason).to.equal('TooLarge');
  });

  it('rejects features that a connected sidecar in scope does not advertise (D6)', () => {
    const weekly = [d('k', { rateLimit: { unit: 'week', requestsPerUnit: 1, unlimited: false, replaces: [] } })];
    const objects = [cr('a', 'x', 'd', 't', weekly)];
    const old = { nodeId: 'old', scope: 'a', features: new Set(['quota']) };
    expect(planSnapshot(input(objects, { sidecars: [old] })).verdicts.get('a/x')?.acceptedReason).to.equal(
      'UnsupportedBySidecars',
    );
    const elsewhere = { ...old, scope: 'b' };
    const current = { nodeId: 'new', scope: 'a', features: undefined };
    expect(planSnapshot(input(objects, { sidecars: [elsewhere, current] })).verdicts.get('a/x')?.accepted).to.equal(
      true,
    );
  });

  it('leaves a quarantined CR out while its content is unchanged, and serves it again once edited', () => {
    const first = planSnapshot(input([cr('a', 'x', 'd', 't'), cr('a', 'y', 'e', 't')]));
    const hash = first.verdicts.get('a/x')?.resource?.contentHash ?? '';
    const quarantine = new Map([['a/x', { contentHash: hash, message: 'a/x: boom' }]]);
    const second = planSnapshot(input([cr('a', 'x', 'd', 't'), cr('a', 'y', 'e', 't')], { quarantine }));
    expect(second.resources.map((r) => r.name)).to.deep.equal(['a/y']);
    expect(second.verdicts.get('a/x')?.programmedReason).to.equal('Quarantined');
    const edited = cr('a', 'x', 'd', 't', [d('k2')]);
    expect(planSnapshot(input([edited], { quarantine })).resources.map((r) => r.name)).to.deep.equal(['a/x']);
  });
});
