// Renders the OpenAPI document as the Markdown API reference inside docs/speech-api.md (run: npx tsx this-file).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi.js';

type Node = Readonly<Record<string, unknown>>;

const BEGIN = '<!-- BEGIN GENERATED API REFERENCE (speech/api/openapi-to-markdown.ts) -->';
const END = '<!-- END GENERATED API REFERENCE -->';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function obj(value: unknown): Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Node) : {};
}

function cell(text: unknown): string {
  return String(text ?? '')
    .replace(/\|/g, '\\|')
    .replace(/\n/g, ' ');
}

/** A short type description of a schema: `string`, `integer (1-200)`, `Voice[]`, `"a" | "b"`. */
function typeOf(schemaValue: unknown): string {
  const schema = obj(schemaValue);
  if (typeof schema.$ref === 'string') return schema.$ref.split('/').pop() ?? '';
  if (Array.isArray(schema.enum)) {
    const values = schema.enum as unknown[];
    return values.length > 8
      ? `one of ${values.length} values (${values.slice(0, 4).join(', ')}, …)`
      : values.map((v) => `"${String(v)}"`).join(' \\| ');
  }
  if (schema.const !== undefined) return `"${String(schema.const)}"`;
  if (schema.format === 'binary') return 'binary';
  if (Array.isArray(schema.oneOf)) return (schema.oneOf as unknown[]).map(typeOf).join(' \\| ');
  if (Array.isArray(schema.allOf))
    return (schema.allOf as unknown[])
      .map(typeOf)
      .filter((s) => s !== 'object')
      .join(' & ');
  if (schema.type === 'array') return `${typeOf(schema.items)}[]`;
  const base = Array.isArray(schema.type) ? (schema.type as string[]).join(' \\| ') : String(schema.type ?? 'object');
  const range =
    schema.minimum !== undefined || schema.maximum !== undefined
      ? ` (${String(schema.minimum ?? '')}-${String(schema.maximum ?? '')})`
      : '';
  return base + range;
}

function renderSchema(name: string, schemaValue: unknown): string[] {
  const schema = obj(schemaValue);
  const out = [`### ${name}`, ''];
  if (typeof schema.description === 'string') out.push(schema.description, '');
  const properties = obj(schema.properties);
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  if (Object.keys(properties).length === 0) {
    out.push(`Type: ${typeOf(schema)}`, '');
    return out;
  }
  out.push('| Field | Type | Required | Notes |', '|---|---|---|---|');
  for (const [field, prop] of Object.entries(properties)) {
    out.push(
      `| \`${field}\` | ${cell(typeOf(prop))} | ${required.has(field) ? 'yes' : 'no'} | ${cell(obj(prop).description)} |`,
    );
  }
  if (schema.additionalProperties === false) out.push('', 'Unknown fields are rejected (400 `validation_failed`).');
  out.push('');
  return out;
}

/** The reference as Markdown: one section per operation, then the schemas. */
export function renderOpenApiMarkdown(doc: OpenApiDocument): string {
  const info = obj(doc.info);
  const out: string[] = [`## API reference (OpenAPI ${String(doc.openapi)}, version ${String(info.version)})`, ''];
  if (typeof info.description === 'string') out.push(info.description, '');
  const components = obj(doc.components);
  const sharedParams = obj(components.parameters);
  const sharedResponses = obj(components.responses);
  for (const [path, itemValue] of Object.entries(obj(doc.paths))) {
    const item = obj(itemValue);
    for (const method of METHODS) {
      const op = obj(item[method]);
      if (Object.keys(op).length === 0) continue;
      out.push(`### \`${method.toUpperCase()} ${path}\``, '');
      if (typeof op.summary === 'string') out.push(`**${op.summary}**`, '');
      if (typeof op.description === 'string') out.push(op.description, '');
      if (Array.isArray(op.security) && op.security.length === 0) out.push('No authentication.', '');
      const params = [...((item.parameters as unknown[]) ?? []), ...((op.parameters as unknown[]) ?? [])].map((p) => {
        const ref = obj(p).$ref;
        return typeof ref === 'string' ? obj(sharedParams[ref.split('/').pop() ?? '']) : obj(p);
      });
      if (params.length > 0) {
        out.push('| Parameter | In | Type | Notes |', '|---|---|---|---|');
        for (const p of params) {
          out.push(`| \`${String(p.name)}\` | ${String(p.in)} | ${cell(typeOf(p.schema))} | ${cell(p.description)} |`);
        }
        out.push('');
      }
      const body = obj(obj(obj(op.requestBody).content)['application/json']).schema;
      if (body !== undefined) out.push(`Request body (application/json): ${typeOf(body)}`, '');
      out.push('| Status | Response |', '|---|---|');
      for (const [status, responseValue] of Object.entries(obj(op.responses))) {
        const ref = obj(responseValue).$ref;
        const response =
          typeof ref === 'string' ? obj(sharedResponses[ref.split('/').pop() ?? '']) : obj(responseValue);
        const content = obj(response.content);
        const types = Object.entries(content)
          .map(([media, m]) => `${media}${obj(m).schema === undefined ? '' : ` ${typeOf(obj(m).schema)}`}`)
          .join('; ');
        out.push(`| ${status} | ${cell(response.description)}${types === '' ? '' : ` (${cell(types)})`} |`);
      }
      out.push('');
    }
  }
  out.push('## Schemas', '');
  for (const [name, schema] of Object.entries(obj(components.schemas))) out.push(...renderSchema(name, schema));
  return (
    out
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trimEnd() + '\n'
  );
}

/** Replaces the generated region of `markdown` (between the markers) with `reference`. */
export function replaceGeneratedReference(markdown: string, reference: string): string {
  const start = markdown.indexOf(BEGIN);
  const end = markdown.indexOf(END);
  if (start === -1 || end === -1 || end < start) throw new Error(`markers ${BEGIN} … ${END} not found`);
  return `${markdown.slice(0, start + BEGIN.length)}\n\n${reference}\n${markdown.slice(end)}`;
}

/**
 * The whole reference document with the generated region replaced and the file formatted as the repository's
 * Prettier config says (the file is checked by `prettier --check`). Prettier is a dev tool, loaded only here.
 */
export async function renderReferenceDocument(current: string, filePath: string): Promise<string> {
  const prettier = await import('prettier');
  const config = (await prettier.resolveConfig(filePath)) ?? {};
  const replaced = replaceGeneratedReference(current, renderOpenApiMarkdown(buildOpenApiDocument()));
  return prettier.format(replaced, { ...config, filepath: filePath });
}

// Run directly: rewrite the reference in docs/speech-api.md (path overridable as the first argument).
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2] ?? 'docs/speech-api.md';
  writeFileSync(file, await renderReferenceDocument(readFileSync(file, 'utf8'), file));
  console.log(`updated ${file}`);
}
