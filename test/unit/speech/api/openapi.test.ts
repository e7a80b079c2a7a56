// The OpenAPI document and the express routes describe the same API; schemas match the request parsers.
import { expect } from 'chai';
import { SPEECH_OPTION_FIELDS, SPEECH_REQUEST_FIELDS } from '../../../../speech/api/speech-request.js';
import { buildOpenApiDocument } from '../../../../speech/api/openapi.js';
import { VOICE_LIST_PARAMS } from '../../../../speech/api/voice-routes.js';
import { allErrorCodes } from '../../../../speech/api/speech-error.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderOpenApiMarkdown, renderReferenceDocument } from '../../../../speech/api/openapi-to-markdown.js';
import { createFakeEngine } from './fake-engine.js';
import { startTestGateway, type TestGateway } from './test-gateway.js';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}

describe('speech API: OpenAPI document', function () {
  this.timeout(30_000);
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway({ engine: createFakeEngine() });
  });
  after(async () => {
    await t?.close();
  });

  it('lists exactly the express routes', () => {
    const stack = (t.gateway.app as unknown as { router: { stack: Layer[] } }).router.stack;
    const fromExpress = stack
      .filter((l) => l.route !== undefined)
      .flatMap((l) => Object.keys(l.route?.methods ?? {}).map((m) => `${m.toUpperCase()} ${l.route?.path ?? ''}`))
      .sort();
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, unknown>> };
    const fromDoc = Object.entries(doc.paths)
      .flatMap(([p, ops]) =>
        Object.keys(ops)
          .filter((k) => ['get', 'post', 'put', 'delete', 'patch'].includes(k))
          .map((m) => `${m.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`),
      )
      .sort();
    expect(fromExpress).to.deep.equal(fromDoc);
  });

  it('is served at /v1/openapi.json without auth and is OpenAPI 3.1', async () => {
    const res = await fetch(`${t.url}/v1/openapi.json`);
    expect(res.status).to.equal(200);
    const doc = (await res.json()) as { openapi: string };
    expect(doc.openapi).to.equal('3.1.0');
    expect(doc).to.deep.equal(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it('describes the request fields, query parameters and error codes the code accepts', () => {
    const doc = buildOpenApiDocument() as {
      components: { schemas: Record<string, { properties: Record<string, { properties?: object }> }> };
      paths: Record<string, { get?: { parameters: { name?: string; $ref?: string }[] } }>;
    };
    const request = doc.components.schemas.SpeechRequest;
    expect(Object.keys(request?.properties ?? {}).sort()).to.deep.equal([...SPEECH_REQUEST_FIELDS].sort());
    expect(Object.keys(request?.properties.options?.properties ?? {}).sort()).to.deep.equal(
      [...SPEECH_OPTION_FIELDS].sort(),
    );
    const params = (doc.paths['/v1/voices']?.get?.parameters ?? [])
      .filter((p) => p.name !== undefined)
      .map((p) => p.name);
    expect(params.sort()).to.deep.equal([...VOICE_LIST_PARAMS].sort());
    const errorSchema = JSON.stringify(doc.components.schemas.Error);
    for (const [code] of allErrorCodes()) expect(errorSchema).to.contain(`"${code}"`);
  });

  it('renders to Markdown with every path', () => {
    const md = renderOpenApiMarkdown(buildOpenApiDocument());
    const doc = buildOpenApiDocument() as { paths: Record<string, unknown> };
    for (const p of Object.keys(doc.paths)) expect(md).to.contain(p);
    expect(md).to.contain('## Schemas');
  });

  it('is current in docs/speech-api.md (run: npx tsx speech/api/openapi-to-markdown.ts)', async () => {
    const file = path.resolve(import.meta.dirname, '../../../../docs/speech-api.md');
    const current = readFileSync(file, 'utf8');
    expect(await renderReferenceDocument(current, file)).to.equal(current);
  });
});
