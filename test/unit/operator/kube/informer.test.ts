// The informer's list+watch protocol against a scripted HTTP API: resourceVersion hand-off, 410 re-list, retries.
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import http from 'node:http';
import { createInformer } from '../../../../operator/kube/informer.js';
import { createKubeClient } from '../../../../operator/kube/kube-client.js';
import { silentLogger } from '../../../../sidecar/logger.js';

const item = (name: string, rv: string) => ({ metadata: { namespace: 'a', name, resourceVersion: rv } });

describe('informer', () => {
  let server: http.Server;
  let port: number;
  const requests: string[] = [];
  let script: ((req: http.IncomingMessage, res: http.ServerResponse) => void)[] = [];

  beforeEach(async () => {
    requests.length = 0;
    server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      const step = script.shift();
      if (step) step(req, res);
      else req.socket.setTimeout(0); // hold the last watch open until the test ends
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const json =
    (body: unknown, status = 200) =>
    (_req: http.IncomingMessage, res: http.ServerResponse) =>
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  const events =
    (...lines: unknown[]) =>
    (_req: http.IncomingMessage, res: http.ServerResponse) =>
      res.writeHead(200).end(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));

  async function run(
    steps: typeof script,
    until: (names: string[]) => boolean,
    inspect?: (items: ReadonlyMap<string, Record<string, unknown>>) => void,
  ): Promise<string[]> {
    script = steps;
    const kc = new KubeConfig();
    // Plain HTTP needs skipTLSVerify in the package (it refuses http:// otherwise).
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const client = createKubeClient(kc);
    let names: string[] = [];
    let resolveDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (resolveDone = resolve));
    const informer = createInformer({
      client,
      path: '/apis/x/v1/things',
      logger: silentLogger,
      retryMs: 5,
      onChange: () => {
        names = [...informer.items().keys()].sort();
        if (until(names)) resolveDone();
      },
    });
    informer.start();
    await done;
    inspect?.(informer.items());
    informer.stop();
    return names;
  }

  it('watches from the list resourceVersion and applies ADDED/MODIFIED/DELETED', async () => {
    const names = await run(
      [
        json({ metadata: { resourceVersion: '5' }, items: [item('one', '4')] }),
        events(
          { type: 'ADDED', object: item('two', '6') },
          { type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } },
          { type: 'DELETED', object: item('one', '8') },
        ),
        events({ type: 'ADDED', object: item('three', '9') }),
      ],
      (n) => n.join() === 'a/three,a/two',
    );
    expect(names).to.deep.equal(['a/three', 'a/two']);
    expect(requests[0]).to.equal('/apis/x/v1/things');
    expect(requests[1])
      .to.match(/watch=(1|true)/)
      .and.contain('resourceVersion=5');
    expect(requests[2], 're-watch from the last event, bookmarks included').to.contain('resourceVersion=8');
  });

  it('re-lists after 410 Gone (as a watch ERROR event or as an HTTP status) and retries other errors', async () => {
    const names = await run(
      [
        json({ metadata: { resourceVersion: '5' }, items: [item('old', '4')] }),
        events({
          type: 'ERROR',
          object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' },
        }),
        json({ metadata: { resourceVersion: '50' }, items: [item('fresh', '49')] }),
        json({ kind: 'Status', code: 500, message: 'boom' }, 500),
        json({ kind: 'Status', code: 410, reason: 'Gone', message: 'gone' }, 410),
        json({ metadata: { resourceVersion: '60' }, items: [item('fresher', '59')] }),
        events({ type: 'ADDED', object: item('last', '61') }),
      ],
      (n) => n.join() === 'a/fresher,a/last',
    );
    expect(names).to.deep.equal(['a/fresher', 'a/last']);
    const lists = requests.filter((r) => !r.includes('watch='));
    expect(lists).to.have.length(3);
    expect(requests[3]).to.contain('resourceVersion=50');
    expect(requests[6]).to.contain('resourceVersion=60');
  });

  it('stores objects without metadata.managedFields', async () => {
    const managed = (name: string, rv: string) => ({
      metadata: { ...item(name, rv).metadata, managedFields: [{ manager: 'kubectl', operation: 'Apply' }] },
      spec: { domain: name },
    });
    let stored: Record<string, unknown>[] = [];
    await run(
      [
        json({ metadata: { resourceVersion: '5' }, items: [managed('listed', '4')] }),
        events({ type: 'ADDED', object: managed('watched', '6') }),
      ],
      (n) => n.join() === 'a/listed,a/watched',
      (items) => (stored = [...items.values()]),
    );
    expect(stored.map((o) => Object.keys(o.metadata as object).sort())).to.deep.equal([
      ['name', 'namespace', 'resourceVersion'],
      ['name', 'namespace', 'resourceVersion'],
    ]);
    expect(stored.map((o) => o.spec)).to.deep.equal([{ domain: 'listed' }, { domain: 'watched' }]);
  });
});
