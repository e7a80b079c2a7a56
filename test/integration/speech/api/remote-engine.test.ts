// The gateway over a real chorus-speech-engine process (ENGINE_URL): synthesis, marks, and a fast 503 when it is gone.
import { expect } from 'chai';
import path from 'node:path';
import { silentLogger } from '../../../../sidecar/logger.js';
import { createRemoteEngine } from '../../../../speech/engine/remote-engine.js';
import { parseSpeechInput } from '../../../../speech/engine/ssml.js';
import { freePort, waitForPort } from '../../../support/ports.js';
import { startProcess, type RunningProcess } from '../../../support/process.js';
import { parseEventStream } from '../../../unit/speech/api/sse-parser.js';
import { postJson, startTestGateway, waitUntilReady, type TestGateway } from '../../../unit/speech/api/test-gateway.js';

const REPO = path.resolve(import.meta.dirname, '../../../..');

describe('speech gateway with a remote engine server', function () {
  this.timeout(180_000);
  let engineServer: RunningProcess | undefined;
  let t: TestGateway;
  before(async () => {
    const port = await freePort();
    engineServer = startProcess(process.execPath, ['--import', 'tsx', 'speech/engine-server-main.ts'], {
      cwd: REPO,
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ENGINE_WORKERS: '1' },
    });
    try {
      await waitForPort(port, '127.0.0.1', 90_000);
    } catch (err) {
      throw new Error(`engine server did not start: ${(err as Error).message}\n${engineServer.output()}`, {
        cause: err,
      });
    }
    t = await startTestGateway({
      engine: createRemoteEngine({ url: `grpc://127.0.0.1:${port}`, logger: silentLogger, readyTimeoutMs: 2000 }),
    });
  });
  after(async () => {
    await t?.close();
    await engineServer?.stop();
  });

  it('is ready and synthesises with complete marks over gRPC', async () => {
    await waitUntilReady(t.url);
    const input = 'Remote engines speak too, word by word.';
    const res = await postJson(`${t.url}/v1/audio/stream/with-timestamps`, t.ownerKey, { input, voice_id: 'jack' });
    expect(res.status).to.equal(200);
    const { events } = parseEventStream(await res.text());
    expect(events[events.length - 1]?.event).to.equal('speech.done');
    const words = events
      .filter((e) => e.event === 'speech.chunk')
      .flatMap((e) => (JSON.parse(e.data) as { speech_marks?: { value: string }[] }).speech_marks ?? []);
    expect(words.map((w) => w.value)).to.deep.equal(parseSpeechInput(input).words.map((w) => w.value));
  });

  it('answers 503 engine_unavailable and not ready once the engine server is gone', async () => {
    await engineServer?.stop();
    const res = await postJson(`${t.url}/v1/audio/stream`, t.ownerKey, { input: 'Anyone there?', voice_id: 'henry' });
    expect(res.status).to.equal(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('engine_unavailable');
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).to.equal(503);
    expect(((await ready.json()) as { checks: { engine: string } }).checks.engine).not.to.equal('ok');
  });
});
