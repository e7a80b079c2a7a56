// Conservative estimate of the CEL cost budget of a CRD schema, in the way the apiserver does: rule cost × cardinality.
import type { SchemaProps } from './ratelimitconfig-crd.js';

/** apiextensions limits (k8s.io/apiextensions-apiserver validation constants). */
export const PER_RULE_COST_LIMIT = 10_000_000;
export const PER_CRD_COST_LIMIT = 100_000_000;

export interface RuleCost {
  /** JSON path-like location of the rule, e.g. `spec.descriptors[].rateLimit`. */
  readonly path: string;
  readonly rule: string;
  /** How many times the rule can run per object: the product of maxItems of the enclosing lists. */
  readonly cardinality: number;
  /** Estimated cost of one evaluation. */
  readonly unitCost: number;
  readonly total: number;
}

/**
 * Cost of one evaluation: 1 per field access, has(), operator and literal, and for `x.all(v, body)`
 * maxItems(x) × (body + string comparisons charged at 0.1 per byte of maxLength, as CEL's size-based cost).
 * An over-estimate for the simple boolean rules we generate; an unbounded list makes it Infinity.
 */
function estimateRuleCost(rule: string, schema: SchemaProps): number {
  const allMatch = /self\.(\w+)\.all\((\w+),\s*(.+)\)/.exec(rule);
  let cost = 0;
  let rest = rule;
  if (allMatch !== null) {
    const [, listField, , body] = allMatch;
    const list = schema.properties?.[listField ?? ''];
    const maxItems = list?.maxItems ?? Infinity;
    const itemProps = list?.items?.properties ?? {};
    const longest = Math.max(0, ...Object.values(itemProps).map((p) => p.maxLength ?? 0));
    const ownLongest = Math.max(0, ...Object.values(schema.properties ?? {}).map((p) => p.maxLength ?? 0));
    const compares = ((body ?? '').match(/[!=]=/g) ?? []).length;
    const bodyCost = tokenCost(body ?? '') + compares * Math.ceil(0.1 * Math.max(longest, ownLongest));
    cost += maxItems * bodyCost + 1;
    rest = rule.replace(allMatch[0], '');
  }
  return cost + tokenCost(rest);
}

function tokenCost(expression: string): number {
  const tokens = expression.match(/has\(|self|\.\w+|!|\|\||&&|[<>!=]=?|'[^']*'|\d+/g) ?? [];
  return tokens.length;
}

/** Every CEL rule in the schema with its estimated cost. */
export function estimateCelCosts(schema: SchemaProps, path = '', cardinality = 1): RuleCost[] {
  const out: RuleCost[] = [];
  for (const validation of schema['x-kubernetes-validations'] ?? []) {
    const unitCost = estimateRuleCost(validation.rule, schema);
    out.push({ path, rule: validation.rule, cardinality, unitCost, total: unitCost * cardinality });
  }
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    out.push(...estimateCelCosts(child, path === '' ? name : `${path}.${name}`, cardinality));
  }
  if (schema.items !== undefined) {
    out.push(...estimateCelCosts(schema.items, `${path}[]`, cardinality * (schema.maxItems ?? Infinity)));
  }
  return out;
}
