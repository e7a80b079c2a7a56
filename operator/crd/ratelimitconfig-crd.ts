// Builds the RateLimitConfig CustomResourceDefinition: the descriptor tree unrolled to a fixed depth, CEL rules, printer columns.
import {
  CRD_UNITS,
  MAX_DESCRIPTOR_DEPTH,
  MAX_NESTED_DESCRIPTORS,
  MAX_TOP_DESCRIPTORS,
  RLC_GROUP,
  RLC_KIND,
  RLC_PLURAL,
  RLC_VERSION,
} from './ratelimitconfig-types.js';

/** The subset of OpenAPI v3 / JSONSchemaProps the generator emits. */
export interface SchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'boolean';
  description?: string;
  format?: string;
  required?: string[];
  properties?: Record<string, SchemaProps>;
  items?: SchemaProps;
  enum?: string[];
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  'x-kubernetes-list-type'?: 'map' | 'set' | 'atomic';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-validations'?: { rule: string; message: string }[];
}

const KEY_MAX_LENGTH = 255;
const VALUE_MAX_LENGTH = 1024;
const NAME_MAX_LENGTH = 255;
const MAX_REPLACES = 8;
/** The self-replace rule iterates a list; its cost times level-3+ cardinality would break the per-rule budget. */
const SELF_REPLACE_CEL_MAX_LEVEL = 2;

function policySchema(level: number): SchemaProps {
  const rules = [
    { rule: 'self.unlimited || has(self.unit)', message: 'unit is required unless unlimited is true' },
    {
      rule: '!(self.unlimited && has(self.unit))',
      message: 'unit must not be set when unlimited is true',
    },
    {
      rule: 'self.unlimited || has(self.requestsPerUnit)',
      message: 'requestsPerUnit is required unless unlimited is true',
    },
  ];
  if (level <= SELF_REPLACE_CEL_MAX_LEVEL) {
    rules.push({
      rule: '!has(self.replaces) || !has(self.name) || self.replaces.all(r, r.name != self.name)',
      message: 'a rate limit must not replace itself',
    });
  }
  return {
    type: 'object',
    description: 'The limit for this descriptor (proto RateLimitPolicy; YAML rate_limit).',
    properties: {
      unit: { type: 'string', enum: [...CRD_UNITS], description: 'Window unit (YAML unit, upper-cased on the wire).' },
      requestsPerUnit: {
        type: 'integer',
        format: 'int64',
        minimum: 0,
        maximum: 4294967295,
        description: 'Requests allowed per unit (YAML requests_per_unit; proto uint32).',
      },
      unlimited: { type: 'boolean', default: false, description: 'Never limit matching requests (YAML unlimited).' },
      name: {
        type: 'string',
        minLength: 1,
        maxLength: NAME_MAX_LENGTH,
        description: 'Name that other limits can list in replaces (YAML name).',
      },
      replaces: {
        type: 'array',
        maxItems: MAX_REPLACES,
        description: 'Named limits this one replaces when both match (YAML replaces).',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string', minLength: 1, maxLength: NAME_MAX_LENGTH } },
        },
      },
    },
    'x-kubernetes-validations': rules,
  };
}

function descriptorSchema(level: number): SchemaProps {
  const leaf = level === MAX_DESCRIPTOR_DEPTH;
  const properties: Record<string, SchemaProps> = {
    key: { type: 'string', minLength: 1, maxLength: KEY_MAX_LENGTH, description: 'Descriptor key (YAML key).' },
    value: {
      type: 'string',
      default: '',
      maxLength: VALUE_MAX_LENGTH,
      description: 'Descriptor value; empty matches any value; may contain * wildcards (YAML value).',
    },
    rateLimit: policySchema(level),
    shadowMode: { type: 'boolean', default: false, description: 'Count but never block (YAML shadow_mode).' },
    detailedMetric: {
      type: 'boolean',
      default: false,
      description: 'Stats keyed by the request values (YAML detailed_metric).',
    },
    quotaMode: { type: 'boolean', description: 'Quota mode (YAML quota_mode; needs a sidecar with feature quota).' },
    metadata: {
      type: 'object',
      maxProperties: 32,
      'x-kubernetes-preserve-unknown-fields': true,
      description: 'Returned as dynamic metadata (YAML metadata; needs a sidecar with feature metadata).',
    },
  };
  if (!leaf) properties.descriptors = descriptorList(level + 1);
  return {
    type: 'object',
    required: ['key'],
    properties,
    'x-kubernetes-validations': [
      leaf
        ? { rule: 'has(self.rateLimit)', message: `a descriptor at depth ${MAX_DESCRIPTOR_DEPTH} needs rateLimit` }
        : {
            rule: 'has(self.rateLimit) || has(self.descriptors)',
            message: 'a descriptor needs rateLimit or nested descriptors',
          },
    ],
  };
}

function descriptorList(level: number): SchemaProps {
  return {
    type: 'array',
    maxItems: level === 1 ? MAX_TOP_DESCRIPTORS : MAX_NESTED_DESCRIPTORS,
    ...(level === 1 ? { minItems: 1 } : {}),
    description: `Descriptors at depth ${level} (YAML descriptors); siblings are unique by (key, value).`,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['key', 'value'],
    items: descriptorSchema(level),
  };
}

function conditionSchema(): SchemaProps {
  return {
    type: 'object',
    required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
    properties: {
      type: { type: 'string', maxLength: 316 },
      status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      lastTransitionTime: { type: 'string', format: 'date-time' },
      reason: { type: 'string', maxLength: 1024 },
      message: { type: 'string', maxLength: 32768 },
    },
  };
}

function statusSchema(): SchemaProps {
  const count: SchemaProps = { type: 'integer', format: 'int32', minimum: 0 };
  return {
    type: 'object',
    properties: {
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      conditions: {
        type: 'array',
        maxItems: 8,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
        items: conditionSchema(),
      },
      xds: {
        type: 'object',
        properties: {
          resourceName: { type: 'string', description: '<namespace>/<name>: the xDS resource name.' },
          contentHash: { type: 'string', description: 'Hash of this CR as encoded for the sidecars.' },
          snapshotVersion: { type: 'string', description: 'Snapshot version that first carried this content.' },
          sidecars: {
            type: 'object',
            description: 'Connected sidecars in scope, by their state for this CR.',
            properties: { total: count, synced: count, pending: count, rejected: count },
          },
          lastRejection: {
            type: 'object',
            properties: {
              nodeId: { type: 'string' },
              version: { type: 'string' },
              message: { type: 'string' },
              time: { type: 'string', format: 'date-time' },
            },
          },
          nodes: {
            type: 'array',
            maxItems: 32,
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['nodeId'],
            items: {
              type: 'object',
              required: ['nodeId'],
              properties: {
                nodeId: { type: 'string' },
                ackedVersion: { type: 'string' },
                state: { type: 'string', enum: ['Synced', 'Pending', 'Rejected'] },
              },
            },
          },
        },
      },
    },
  };
}

/** The whole schema of one RateLimitConfig object. */
export function rateLimitConfigSchema(): SchemaProps {
  return {
    type: 'object',
    description: 'Rate limit rules for one domain, served to the rate limit sidecars over xDS by chorus-operator.',
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        required: ['domain', 'descriptors'],
        properties: {
          domain: {
            type: 'string',
            minLength: 1,
            maxLength: 255,
            pattern: '^[^\\s]+$',
            description: 'Rate limit domain (YAML domain); unique among the CRs a sidecar receives.',
          },
          descriptors: descriptorList(1),
        },
      },
      status: statusSchema(),
    },
  };
}

/** apiextensions.k8s.io/v1 CustomResourceDefinition for RateLimitConfig. */
export function rateLimitConfigCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${RLC_PLURAL}.${RLC_GROUP}`,
      labels: { 'app.kubernetes.io/part-of': 'chorus' },
    },
    spec: {
      group: RLC_GROUP,
      scope: 'Namespaced',
      names: {
        kind: RLC_KIND,
        listKind: `${RLC_KIND}List`,
        plural: RLC_PLURAL,
        singular: 'ratelimitconfig',
        shortNames: ['rlc'],
        categories: ['chorus'],
      },
      versions: [
        {
          name: RLC_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          selectableFields: [{ jsonPath: '.spec.domain' }],
          additionalPrinterColumns: [
            { name: 'Domain', type: 'string', jsonPath: '.spec.domain' },
            { name: 'Accepted', type: 'string', jsonPath: '.status.conditions[?(@.type=="Accepted")].status' },
            { name: 'Synced', type: 'string', jsonPath: '.status.conditions[?(@.type=="Synced")].status' },
            { name: 'Sidecars', type: 'integer', jsonPath: '.status.xds.sidecars.synced' },
            { name: 'Rejected', type: 'integer', jsonPath: '.status.xds.sidecars.rejected', priority: 1 },
            { name: 'Version', type: 'string', jsonPath: '.status.xds.snapshotVersion', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: { openAPIV3Schema: rateLimitConfigSchema() },
        },
      ],
    },
  };
}
