// The checked-in CRD YAML is current, and its CEL rules stay inside the apiserver's cost budgets.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { estimateCelCosts, PER_CRD_COST_LIMIT, PER_RULE_COST_LIMIT } from '../../../../operator/crd/cel-cost.js';
import { renderCrds } from '../../../../operator/crd/generate.js';
import { rateLimitConfigSchema, type SchemaProps } from '../../../../operator/crd/ratelimitconfig-crd.js';

function depthOf(list: SchemaProps | undefined): number {
  return list === undefined ? 0 : 1 + depthOf(list.items?.properties?.descriptors);
}

describe('RateLimitConfig CRD', () => {
  it('crds/ matches the generator (run `npx tsx operator/crd/generate.ts` after editing operator/crd)', () => {
    for (const crd of renderCrds()) {
      const checkedIn = readFileSync(path.resolve('crds', crd.file), 'utf8');
      expect(checkedIn, `crds/${crd.file} is stale`).to.equal(crd.yaml);
    }
  });

  it('unrolls the descriptor tree to 5 levels with maxItems 64 on top and 8 below', () => {
    const top = rateLimitConfigSchema().properties?.spec?.properties?.descriptors;
    expect(depthOf(top)).to.equal(5);
    expect(top?.maxItems).to.equal(64);
    expect(top?.items?.properties?.descriptors?.maxItems).to.equal(8);
    expect(top?.['x-kubernetes-list-map-keys']).to.deep.equal(['key', 'value']);
    expect(top?.items?.properties?.value?.default, 'list-map keys must be defaulted').to.equal('');
  });

  it('keeps every CEL rule under the per-rule limit and the sum under the per-CRD limit', () => {
    const costs = estimateCelCosts(rateLimitConfigSchema());
    expect(costs.length).to.be.greaterThan(20);
    for (const c of costs) expect(c.total, `${c.path}: ${c.rule}`).to.be.lessThan(PER_RULE_COST_LIMIT);
    const sum = costs.reduce((acc, c) => acc + c.total, 0);
    expect(sum).to.be.lessThan(PER_CRD_COST_LIMIT);
    const deepest = costs.filter((c) => c.cardinality === 64 * 8 ** 4);
    expect(deepest.length, 'level-5 rules are counted with cardinality 262144').to.be.greaterThan(0);
  });

  it('puts the iterating self-replace rule only where its cost fits (levels 1 and 2)', () => {
    const selfReplace = estimateCelCosts(rateLimitConfigSchema()).filter((c) => c.rule.includes('.all('));
    expect(selfReplace.map((c) => c.cardinality)).to.deep.equal([64, 512]);
  });
});
