import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { RestClient, WatchStream } from '../../kube/index.ts';
import type { Trace } from '../trace-rows.ts';
import type { TraceTarget } from '../trace.ts';
import type { GroupTracer } from './group-tracer.ts';
import { Dashboard, hostAllowed } from './server.ts';

const TOKEN = 'test-token-0123456789';
const AUTH = { Authorization: `Bearer ${TOKEN}` };

const TRACED: Trace = { cluster: 'east', object: 'ConfigMap app/a', source: { member: 'west', object: 'ConfigMap app/a', version: '7' }, rows: [{ member: 'east', seen: 'first-hand', object: 'ConfigMap app/a', rule: 'r', state: 'in sync', reason: 'in sync' }] };

/**
 * A tracer whose traces wait until the test lets them go (`release`), or fail as told; it says
 * what it was asked and which of its traces were called off.
 */
class StubTracer implements GroupTracer {
  readonly asked: TraceTarget[] = [];
  readonly calledOff: TraceTarget[] = [];
  private waiting: (() => void)[] = [];
  failWith: Error | undefined;

  objectsOf(): ReturnType<GroupTracer['objectsOf']> {
    return Promise.resolve({ rule: 'r', objects: [{ kind: 'ConfigMap', namespace: 'app', name: 'a', role: 'source' }], notes: [] });
  }

  trace(target: TraceTarget, signal: AbortSignal): Promise<Trace> {
    this.asked.push(target);
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => {
        this.calledOff.push(target);
        reject(signal.reason as Error);
      });
      this.waiting.push(() => (this.failWith ? reject(this.failWith) : resolve(TRACED)));
    });
  }

  /** Lets every waiting trace end. */
  release(): void {
    for (const go of this.waiting.splice(0)) go();
  }
}

/** Resolves once `check` holds, looking again on every turn of the event loop. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

/** A cluster that lists one Cluster and then stays silent: enough for the server's own behaviour. */
function stubRest(): RestClient {
  const cluster = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: 'east', resourceVersion: '1' }, spec: { clusterID: 'e' }, status: { state: 'Ready', type: 'Local' } };
  const rule = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name: 'r', resourceVersion: '1' }, spec: { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{}] } };
  const silent = (): WatchStream => {
    let close!: () => void;
    const closed = new Promise<void>((resolve) => (close = resolve));
    const events = async function* () {
      await closed;
      yield* [];
    };
    return { [Symbol.asyncIterator]: events, batches: events, close };
  };
  return {
    list: (ref: { resource: string }) => Promise.resolve({ metadata: { resourceVersion: '1' }, items: ref.resource === 'clusters' ? [cluster] : ref.resource === 'resourcesyncrules' ? [rule] : [] }),
    watch: () => Promise.resolve(silent()),
  } as unknown as RestClient;
}

interface Reply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

function get(port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject).end();
  });
}

/** Opens the event stream; resolves with its first event and the response, to close it later. */
function openStream(port: number): Promise<{ status: number; first: string; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/api/events', headers: AUTH }, (res) => {
      if (res.statusCode !== 200) return resolve({ status: res.statusCode ?? 0, first: '', res });
      res.setEncoding('utf8').once('data', (d: string) => resolve({ status: 200, first: d, res }));
    })
      .on('error', reject)
      .end();
  });
}

describe('dashboard server', () => {
  const stop = new AbortController();
  const tracer = new StubTracer();
  let port: number;

  before(async () => {
    const d = await Dashboard.start({ rest: stubRest(), viewer: 'east', host: '127.0.0.1', port: 0, token: TOKEN, maxViewers: 1, tracer }, stop.signal);
    port = Number(new URL(d.url).port);
    // Until the rules' cache has synced, the rule is not there.
    while ((await get(port, '/api/rule-objects?rule=r', AUTH)).status === 404) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(new URL(d.url).searchParams.get('token'), TOKEN, 'the printed URL carries the token');
  });
  after(() => stop.abort());

  it('serves the page, which holds no data, to anyone, and sets no cookie', async () => {
    for (const path of ['/', `/?token=${TOKEN}`]) {
      const page = await get(port, path);
      assert.equal(page.status, 200);
      assert.match(page.body, /<script src="app.js" defer><\/script>/);
      assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
      assert.equal(page.headers['cache-control'], 'no-store');
      assert.equal(page.headers['set-cookie'], undefined);
    }
    const js = await get(port, '/app.js');
    assert.equal(js.status, 200);
    assert.match(js.headers['content-type'] ?? '', /^text\/javascript/);
    assert.equal(js.headers['set-cookie'], undefined);
  });

  it('answers data only to a request whose Authorization header carries the token', async () => {
    // Not in the URL, not in a cookie, not another token, not another scheme.
    for (const [path, headers] of [
      ['/api/view', {}],
      [`/api/view?token=${TOKEN}`, {}],
      ['/api/view', { Cookie: `cluster-registry-dashboard=${TOKEN}` }],
      ['/api/view', { Authorization: 'Bearer wrong-token-0123456789' }],
      ['/api/view', { Authorization: `Basic ${TOKEN}` }],
      ['/api/events', {}],
      [`/api/events?token=${TOKEN}`, {}],
      ['/api/trace?rule=r&kind=ConfigMap&name=a', {}],
      ['/api/rule-objects?rule=r', { Authorization: 'Bearer wrong-token-0123456789' }],
    ] as const) {
      const denied = await get(port, path, headers);
      assert.equal(denied.status, 401, `${path} ${JSON.stringify(headers)}`);
      assert.match(String(denied.headers['www-authenticate']), /^Bearer /);
      assert.doesNotMatch(denied.body, /east/);
    }
    assert.equal((await get(port, '/api/view', AUTH)).status, 200);
  });

  it('refuses other hosts (DNS rebinding), other methods and other paths', async () => {
    assert.equal((await get(port, '/', { Host: 'evil.example' })).status, 421);
    assert.equal((await get(port, '/api/view', { ...AUTH, Host: 'evil.example' })).status, 421);
    assert.equal((await get(port, '/api/view', AUTH, 'POST')).status, 405);
    assert.equal((await get(port, '/nothing', AUTH)).status, 404);
  });

  it('takes a trace or a rule\'s objects only by GET, of a named object or rule', async () => {
    assert.equal((await get(port, '/api/trace?rule=r&kind=ConfigMap&name=a', AUTH, 'HEAD')).status, 405);
    for (const path of ['/api/trace?name=a', '/api/trace?kind=configmap', '/api/trace?rule=r&kind=ConfigMap&name=', `/api/trace?rule=r&kind=ConfigMap&name=${'a'.repeat(513)}`, '/api/rule-objects']) {
      const refused = await get(port, path, AUTH);
      assert.equal(refused.status, 400, path);
    }
    const missing = await get(port, '/api/rule-objects?rule=nope', AUTH);
    assert.equal(missing.status, 404);
    assert.match(missing.body, /no ResourceSyncRule nope here/);
    // Only the kind the rule syncs: not whatever the token's holder names.
    const other = await get(port, '/api/trace?rule=r&kind=Secret&name=a&namespace=app', AUTH);
    assert.equal(other.status, 400);
    assert.match(other.body, /rule r syncs ConfigMap, not Secret/);
    assert.equal((await get(port, '/api/trace?rule=nope&kind=ConfigMap&name=a&namespace=app', AUTH)).status, 404);
  });

  it('answers a trace with its rows and what its exit code would say, two at once at most, and calls off one the page left', async () => {
    const first = get(port, '/api/trace?rule=r&kind=ConfigMap&name=a&namespace=app', AUTH);
    const second = get(port, '/api/trace?rule=r&kind=ConfigMap&name=b&namespace=app', AUTH);
    await until(() => tracer.asked.length === 2);
    const third = await get(port, '/api/trace?rule=r&kind=ConfigMap&name=c&namespace=app', AUTH);
    assert.equal(third.status, 429);
    assert.equal(third.headers['retry-after'], '5');
    tracer.release();
    const answered = await first;
    assert.equal(answered.status, 200);
    assert.deepEqual(JSON.parse(answered.body), { ...TRACED, outcome: 'in sync' });
    assert.equal((await second).status, 200);
    assert.deepEqual(tracer.asked.slice(0, 2), [{ kind: 'ConfigMap', name: 'a', namespace: 'app' }, { kind: 'ConfigMap', name: 'b', namespace: 'app' }]);

    // A page that hangs up: its trace is called off, and its place is free again.
    const left = request({ host: '127.0.0.1', port, path: '/api/trace?rule=r&kind=ConfigMap&name=d&namespace=app', headers: AUTH });
    left.on('error', () => undefined).end();
    await until(() => tracer.asked.length === 3);
    left.destroy();
    await until(() => tracer.calledOff.some((t) => t.name === 'd'));
    const again = get(port, '/api/trace?rule=r&kind=ConfigMap&name=e&namespace=app', AUTH);
    const after = get(port, '/api/trace?rule=r&kind=ConfigMap&name=f&namespace=app', AUTH);
    await until(() => tracer.asked.length === 5);
    tracer.release();
    assert.deepEqual([(await again).status, (await after).status], [200, 200]);
  });

  it("answers a trace that failed with why, as the command says it", async () => {
    tracer.failWith = new Error('ConfigMap app/zz is not on east');
    try {
      const failed = get(port, '/api/trace?rule=r&kind=ConfigMap&name=zz&namespace=app', AUTH);
      await until(() => tracer.asked.some((t) => t.name === 'zz'));
      tracer.release();
      const answer = await failed;
      assert.equal(answer.status, 422);
      assert.equal(answer.body.trim(), 'ConfigMap app/zz is not on east');
    } finally {
      tracer.failWith = undefined;
    }
  });

  it("lists a rule's objects, of a rule in its cache", async () => {
    const listed = await get(port, '/api/rule-objects?rule=r', AUTH);
    assert.equal(listed.status, 200, listed.body);
    assert.deepEqual(JSON.parse(listed.body), { rule: 'r', objects: [{ kind: 'ConfigMap', namespace: 'app', name: 'a', role: 'source' }], notes: [] });
  });

  it('offers no trace when started without one', async () => {
    const off = new AbortController();
    try {
      const d = await Dashboard.start({ rest: stubRest(), viewer: 'east', host: '127.0.0.1', port: 0, token: TOKEN }, off.signal);
      const at = Number(new URL(d.url).port);
      assert.equal((JSON.parse((await get(at, '/api/view', AUTH)).body) as { tracing: boolean }).tracing, false);
      for (const path of ['/api/trace?rule=r&kind=ConfigMap&name=a', '/api/rule-objects?rule=r']) {
        const refused = await get(at, path, AUTH);
        assert.equal(refused.status, 404, path);
        assert.match(refused.body, /tracing is off/);
      }
    } finally {
      off.abort();
    }
  });

  it('serves the view as JSON, with the picture and the state of each cache', async () => {
    const view = await get(port, '/api/view', AUTH);
    const state = JSON.parse(view.body) as { view: { viewer: string; clusters: { name: string }[] }; graph: unknown; sources: { resource: string }[]; tracing: boolean };
    assert.equal(state.view.viewer, 'east');
    assert.equal(state.tracing, true);
    assert.deepEqual(state.view.clusters.map((c) => c.name), ['east']);
    assert.deepEqual(state.graph, { nodes: [{ name: 'east', local: true, allViews: true }], edges: [], omitted: '' }, 'the picture, from the same Clusters');
    assert.deepEqual(state.sources.map((s) => s.resource), ['clusters.clusterregistry.k8s.cisco.com', 'resourcesyncrules.clusterregistry.k8s.cisco.com', 'clusterfeatures.clusterregistry.k8s.cisco.com']);
  });

  it('streams the view, refuses pages past its limit, and frees the place of a page that closed', async () => {
    const first = await openStream(port);
    assert.equal(first.status, 200);
    assert.match(first.first, /^event: view\ndata: \{/);
    const second = await openStream(port);
    assert.equal(second.status, 503);
    second.res.resume();
    first.res.destroy();
    for (;;) {
      const again = await openStream(port);
      again.res.destroy();
      if (again.status === 200) break;
      // The server learns of the close a moment later: until then the page is still counted.
      await new Promise((resolve) => setImmediate(resolve));
    }
  });

  it('fails to start on a taken port, leaving nothing running (the test process could not exit otherwise)', async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const signal = new AbortController().signal;
      await assert.rejects(Dashboard.start({ rest: stubRest(), viewer: 'east', host: '127.0.0.1', port: (taken.address() as AddressInfo).port }, signal), /EADDRINUSE/);
    } finally {
      taken.close();
    }
  });

  it('takes only an IP address or localhost to listen on', async () => {
    await assert.rejects(Dashboard.start({ rest: stubRest(), viewer: 'east', host: '', port: 0 }, stop.signal), /must be an IP address or localhost/);
  });
});

describe('dashboard host check', () => {
  it('bound to loopback, answers only requests for a loopback name, whatever the port', () => {
    for (const bound of ['127.0.0.1', '::1', 'localhost']) {
      for (const host of ['localhost:8080', '127.0.0.1:8080', '127.0.0.2', '[::1]:8080', 'LOCALHOST']) assert.ok(hostAllowed(host, bound), `${host} on ${bound}`);
      // A name an attacker's DNS points at 127.0.0.1, or none at all.
      for (const host of ['evil.example:8080', 'localhost.evil.example', '127.0.0.1.evil.example', '', undefined]) assert.ok(!hostAllowed(host, bound), `${String(host)} on ${bound}`);
    }
  });

  it('bound elsewhere, any host: the token guards it', () => {
    assert.ok(hostAllowed('dashboard.internal:8080', '0.0.0.0'));
    assert.ok(hostAllowed('10.0.0.5:8080', '10.0.0.5'));
  });
});

