// Turns YAML text (or an already-parsed document) into the untyped tree that Go's yaml.v2 would produce.
//
// Parsing is done by eemeli/yaml (`yaml`) with the failsafe schema, so every scalar arrives as text and is
// resolved here with yaml.v2's YAML 1.1 rules (yes/no/on/off booleans, base-0 integers, timestamps as text).
// Like yaml.v2's Unmarshal: only the first document is read, duplicate keys are accepted (the last one wins
// where a map is built), anchors/aliases and `<<` merge keys are expanded.
// Known differences: syntax error texts come from eemeli/yaml (prefixed `yaml: line N: ` as yaml.v2 does) except
// for an unterminated quoted scalar, which reads `found unexpected end of stream` as libyaml's does; eemeli/yaml
// is a YAML 1.2 parser, so a few exotic inputs that libyaml accepts or rejects may be judged differently.
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseAllDocuments, Scalar } from 'yaml';
import type { Document, Node as EemeliNode } from 'yaml';
import { resolvePlainScalar, type ResolvedScalar } from './yaml-scalar.js';

interface NodeBase {
  /** 1-based line of the node in its source; 0 when the tree was not built from text. */
  readonly line: number;
  /** The short tag yaml.v2 would print for this node (`!!str`, `!!int`, `!!map`, ...). */
  readonly tag: string;
}

export type YamlScalarNode = NodeBase &
  ResolvedScalar & {
    /** The scalar's text as yaml.v2 keeps it (`n.value`); what a Go string field receives. */
    readonly text: string;
  };

export interface YamlMapNode extends NodeBase {
  readonly kind: 'map';
  /** Entries in source order with merge keys expanded in place; duplicate keys are kept. */
  readonly entries: readonly YamlEntry[];
}

export interface YamlSeqNode extends NodeBase {
  readonly kind: 'seq';
  readonly items: readonly YamlNode[];
}

export interface YamlEntry {
  readonly key: YamlNode;
  readonly value: YamlNode;
}

export type YamlNode = YamlScalarNode | YamlMapNode | YamlSeqNode;

const SCALAR_TAG: Readonly<Record<ResolvedScalar['kind'], string>> = {
  null: '!!null',
  str: '!!str',
  bool: '!!bool',
  int: '!!int',
  float: '!!float',
  timestamp: '!!timestamp',
};

/** Thrown for input yaml.v2 fails on while parsing (syntax, unknown anchor, bad merge); `code` picks the ConfigError. */
export class YamlTreeError extends Error {
  constructor(
    readonly code: 'yaml_syntax' | 'decode_error',
    message: string,
  ) {
    super(message);
  }
}

function shortTag(tag: string): string {
  return tag.startsWith('tag:yaml.org,2002:') ? '!!' + tag.slice('tag:yaml.org,2002:'.length) : tag;
}

const RESOLVABLE_TAGS = new Set(['!!bool', '!!int', '!!float', '!!timestamp']);

function scalarNode(resolved: ResolvedScalar, text: string, line: number, tag?: string): YamlScalarNode {
  return { ...resolved, text, line, tag: tag ?? SCALAR_TAG[resolved.kind] };
}

class TreeBuilder {
  private readonly resolving = new Set<EemeliNode>();

  constructor(
    private readonly doc: Document.Parsed,
    private readonly lines: LineCounter,
  ) {}

  private lineOf(node: EemeliNode): number {
    const offset = node.range?.[0];
    return offset === undefined ? 0 : this.lines.linePos(offset).line;
  }

  build(node: EemeliNode | null | undefined, fallbackLine: number): YamlNode {
    if (node === null || node === undefined) return scalarNode({ kind: 'null' }, '', fallbackLine);
    if (isAlias(node)) {
      const target = node.resolve(this.doc);
      if (target === undefined)
        throw new YamlTreeError('yaml_syntax', `yaml: unknown anchor '${node.source}' referenced`);
      if (this.resolving.has(target)) {
        throw new YamlTreeError('decode_error', `yaml: anchor '${node.source}' value contains itself`);
      }
      this.resolving.add(target);
      try {
        return this.build(target, fallbackLine);
      } finally {
        this.resolving.delete(target);
      }
    }
    const line = this.lineOf(node);
    if (isScalar(node)) return this.scalar(node, line);
    if (isMap(node)) {
      const entries: YamlEntry[] = [];
      for (const pair of node.items) {
        const keyNode = pair.key as EemeliNode | null;
        if (isScalar(keyNode) && keyNode.type === Scalar.PLAIN && keyNode.tag === undefined && keyNode.value === '<<') {
          this.merge(pair.value as EemeliNode | null, entries);
          continue;
        }
        const key = this.build(keyNode, line);
        entries.push({ key, value: this.build(pair.value as EemeliNode | null, key.line) });
      }
      return { kind: 'map', entries, line, tag: '!!map' };
    }
    if (isSeq(node)) {
      const items = node.items.map((item) => this.build(item as EemeliNode | null, line));
      return { kind: 'seq', items, line, tag: '!!seq' };
    }
    return scalarNode({ kind: 'null' }, '', line);
  }

  private scalar(node: Scalar, line: number): YamlScalarNode {
    const text = typeof node.value === 'string' ? node.value : String(node.value ?? '');
    const tag = node.tag === undefined ? undefined : shortTag(node.tag);
    if (tag === undefined) {
      // Quoted and block scalars are never resolved (yaml.v2: not implicit → !!str).
      return node.type === Scalar.PLAIN
        ? scalarNode(resolvePlainScalar(text), text, line)
        : scalarNode({ kind: 'str', value: text }, text, line);
    }
    if (RESOLVABLE_TAGS.has(tag)) {
      const resolved = resolvePlainScalar(text);
      const got = SCALAR_TAG[resolved.kind];
      if (got === tag) return scalarNode(resolved, text, line, tag);
      if (tag === '!!float' && resolved.kind === 'int') {
        return scalarNode({ kind: 'float', value: Number(resolved.value) }, text, line, tag);
      }
      throw new YamlTreeError('decode_error', `yaml: cannot decode ${got} \`${text}\` as a ${tag}`);
    }
    // !!str, !!binary and application tags: yaml.v2 keeps the text.
    return scalarNode({ kind: 'str', value: text }, text, line, tag);
  }

  /** yaml.v2 merge: a map is inlined; a sequence of maps is inlined last-to-first so earlier maps win. */
  private merge(value: EemeliNode | null, into: YamlEntry[]): void {
    const built = this.build(value, 0);
    const fail = (): never => {
      throw new YamlTreeError('decode_error', 'yaml: map merge requires map or sequence of maps as the value');
    };
    if (built.kind === 'map') {
      into.push(...built.entries);
    } else if (built.kind === 'seq') {
      for (let i = built.items.length - 1; i >= 0; i -= 1) {
        const item = built.items[i];
        if (item === undefined || item.kind !== 'map') return fail();
        into.push(...item.entries);
      }
    } else {
      fail();
    }
  }
}

function countLineBreaks(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) === 10) n += 1;
  return n;
}

/** The line (1-based) of the first `:` that ends a key at or after `offset` (where libyaml reports the problem). */
function lineOfNextColon(text: string, offset: number): number {
  const match = /:(?=[ \t\r\n]|$)/.exec(text.slice(offset));
  const at = match === null ? offset : offset + match.index;
  return countLineBreaks(text.slice(0, at)) + 1;
}

/**
 * Formats a parse failure like yaml.v2 (`yaml: line N: <problem>`, no line on the first line). The commonest
 * faults get libyaml's own wording and line; others keep eemeli/yaml's wording.
 */
function syntaxMessage(text: string, code: string, message: string, offset: number, line: number): string {
  let problem = (message.split('\n')[0] ?? message).replace(/ at line \d+, column \d+:?$/, '');
  let where = line;
  if (code === 'MISSING_CHAR' && /quote/.test(problem)) {
    // libyaml's scanner reports an unterminated quoted scalar at the end of the stream.
    problem = 'found unexpected end of stream';
    where = countLineBreaks(text) + 1;
  } else if (code === 'BLOCK_AS_IMPLICIT_KEY') {
    problem = 'mapping values are not allowed in this context';
    where = lineOfNextColon(text, offset);
  } else if (code === 'TAB_AS_INDENT') {
    problem = 'found character that cannot start any token';
  } else if (code === 'BAD_INDENT' && /^Flow (sequence|mapping)/.test(problem)) {
    // An unterminated flow collection: libyaml's parser reaches the end of the stream.
    problem = 'did not find expected node content';
    where = countLineBreaks(text);
  }
  return where > 1 ? `yaml: line ${where}: ${problem}` : `yaml: ${problem}`;
}

/** Parses YAML text into the yaml.v2-shaped tree; throws YamlTreeError. An empty stream gives a null node. */
export function parseYamlTree(text: string): YamlNode {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, {
    schema: 'failsafe',
    uniqueKeys: false,
    lineCounter: lines,
    prettyErrors: false,
  });
  const first = Array.isArray(docs) ? docs[0] : undefined;
  if (first === undefined) return scalarNode({ kind: 'null' }, '', 0);
  const error = first.errors[0];
  if (error !== undefined) {
    const line = lines.linePos(error.pos[0]).line;
    throw new YamlTreeError('yaml_syntax', syntaxMessage(text, error.code, error.message, error.pos[0], line));
  }
  return new TreeBuilder(first, lines).build(first.contents as EemeliNode | null, 0);
}

/**
 * Builds the same tree from a plain JS value (the `document` form used by the xDS client and the operator):
 * strings, finite numbers (integers become `!!int`), booleans, null/undefined, arrays and plain objects.
 */
export function documentToTree(value: unknown): YamlNode {
  if (value === null || value === undefined) return scalarNode({ kind: 'null' }, '', 0);
  if (typeof value === 'string') return scalarNode({ kind: 'str', value }, value, 0);
  if (typeof value === 'boolean') return scalarNode({ kind: 'bool', value }, String(value), 0);
  if (typeof value === 'bigint') return scalarNode({ kind: 'int', value }, String(value), 0);
  if (typeof value === 'number') {
    return Number.isInteger(value)
      ? scalarNode({ kind: 'int', value: BigInt(value) }, String(value), 0)
      : scalarNode({ kind: 'float', value }, String(value), 0);
  }
  if (Array.isArray(value)) {
    return { kind: 'seq', items: value.map((item: unknown) => documentToTree(item)), line: 0, tag: '!!seq' };
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => ({
      key: documentToTree(k),
      value: documentToTree(v),
    }));
    return { kind: 'map', entries, line: 0, tag: '!!map' };
  }
  return scalarNode({ kind: 'str', value: String(value) }, String(value), 0);
}
