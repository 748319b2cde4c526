// The reflector loop against a scripted server: LIST, WATCH from the list RV, re-watch from the
// last RV (bookmarks included) after a clean close, relist with tombstones on an in-stream 410,
// backoff after errors; plus handler isolation, replay to late handlers and periodic resync.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { CacheBudget, chargedSize } from './cache-budget.ts';
import { Discovery } from './discovery.ts';
import { Informer, watchWasHealthy, withoutManagedFields, type InformerOptions } from './informer.ts';
import { InformerFactory } from './informer-factory.ts';
import { createLogger } from './log.ts';
import { RestClient } from './rest.ts';
import type { KubeObject } from './types.ts';
import { line, list, scripted, stream, type Step } from '../../test/support/scripted-server.ts';

const cm = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'n', resourceVersion: rv } });
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('watchWasHealthy', () => {
  it('takes a watch that had events, or lasted over a second, for healthy, and one that ended at once empty for not', () => {
    const cases: [events: number, lastedMs: number, healthy: boolean][] = [
      [0, 0, false],
      [0, 1000, false],
      [0, 1001, true],
      [1, 0, true],
      [3, 5000, true],
    ];
    for (const [events, lastedMs, healthy] of cases) assert.equal(watchWasHealthy(events, lastedMs), healthy, `${events} events in ${lastedMs} ms`);
  });
});

describe('Informer', () => {
  it('lists, watches, re-watches from the last RV, and relists with tombstones on an in-stream 410', async () => {
    const srv = await scripted({
      list: [list('10', [cm('a', '5'), cm('b', '6')], 'page2'), list('10', [cm('d', '7')]), list('20', [cm('a', '11'), cm('c', '13')])],
      watch: [
        stream(line('MODIFIED', cm('a', '11')) + line('BOOKMARK', { metadata: { resourceVersion: '12' } })),
        stream(line('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' })),
      ],
    });
    const ac = new AbortController();
    const inf = new Informer({ rest: srv.rest, resource: { group: '', version: 'v1', resource: 'configmaps' }, namespace: 'n', pageSize: 2 });
    const log: string[] = [];
    // A handler that throws must not disturb the cache or the other handlers.
    inf.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    inf.addEventHandler({
      onAdd: (o) => log.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}`),
      onUpdate: (o, n) => log.push(`update ${o.metadata.name}@${o.metadata.resourceVersion}->${n.metadata.resourceVersion}`),
      onDelete: (o, unknown) => log.push(`delete ${o.metadata.name}${unknown ? ' (final state unknown)' : ''}`),
    });
    const running = inf.start(ac.signal);
    try {
      assert.equal(await inf.waitForSync(AbortSignal.timeout(5_000)), true);
      await until(() => inf.lastResourceVersion === '20' && srv.urls.length >= 6);
      assert.deepEqual(log, ['add a@5', 'add b@6', 'add d@7', 'update a@5->11', 'add c@13', 'delete b (final state unknown)', 'delete d (final state unknown)']);
      assert.deepEqual(inf.store.keys().sort(), ['n/a', 'n/c']);
      assert.equal(inf.store.get('n/a')?.apiVersion, 'v1', 'list items get apiVersion and kind');
      assert.equal(inf.store.get('n/a')?.kind, 'ConfigMap');
      const q = srv.urls.map((u) => `${u.searchParams.get('watch') ? 'watch' : 'list'} rv=${u.searchParams.get('resourceVersion') ?? ''} continue=${u.searchParams.get('continue') ?? ''}`);
      assert.deepEqual(q.slice(0, 6), ['list rv= continue=', 'list rv= continue=page2', 'watch rv=10 continue=', 'watch rv=12 continue=', 'list rv= continue=', 'watch rv=20 continue=']);
      const watch = srv.urls.find((u) => u.searchParams.get('watch'))!;
      assert.equal(watch.searchParams.get('allowWatchBookmarks'), 'true');
      const timeout = Number(watch.searchParams.get('timeoutSeconds'));
      assert.ok(timeout >= 300 && timeout < 600, `timeoutSeconds ${timeout}`);
      assert.equal(srv.urls[0]!.searchParams.get('limit'), '2');
    } finally {
      ac.abort();
      await running;
      srv.close();
    }
  });

  it("clips an in-stream ERROR's reason and message and ignores a code that is not a number", async () => {
    const hostile = { kind: 'Status', code: ['9'.repeat(10_000)], reason: 'R'.repeat(10_000), message: 'm'.repeat(100_000) };
    const srv = await scripted({ list: [list('3', [])], watch: [stream(line('ERROR', hostile))] });
    const ac = new AbortController();
    const errors: { code: number; reason: string; message: string }[] = [];
    const write = (l: string): void => {
      const { err } = JSON.parse(l) as { err?: (typeof errors)[number] };
      if (err) errors.push(err);
    };
    const logger = createLogger({ destination: { write } });
    const inf = new Informer({ rest: srv.rest, resource: { group: '', version: 'v1', resource: 'configmaps' }, logger, backoff: { initialMs: 10_000, maxMs: 10_000 } });
    const running = inf.start(ac.signal);
    try {
      await until(() => errors.length > 0);
      const err = errors[0]!;
      assert.equal(err.code, 500);
      assert.equal(err.reason.length, 63);
      assert.match(err.message, /^WATCH configmaps: 500 R{39}… \(9961 more characters\): m{998}… \(99002 more characters\)$/);
      assert.equal(inf.lastError, `500 ${err.reason}`);
    } finally {
      ac.abort();
      await running;
      srv.close();
    }
  });

  it('backs off and retries after errors, never giving up', async () => {
    const fail: Step = (_u, res) => {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', code: 500, reason: 'InternalError' }));
    };
    const srv = await scripted({ list: [fail, fail, fail, list('3', [cm('a', '1')])], watch: [] });
    const ac = new AbortController();
    const rest = new RestClient({ server: srv.rest.server, tls: {}, authHeaders: async () => ({}), invalidate: () => undefined }, { maxRetries: 0 });
    const inf = new Informer({ rest, resource: { group: '', version: 'v1', resource: 'configmaps' }, backoff: { initialMs: 10, maxMs: 40 } });
    const running = inf.start(ac.signal);
    try {
      assert.equal(await inf.waitForSync(AbortSignal.timeout(5_000)), true);
      assert.equal(inf.store.size, 1);
    } finally {
      ac.abort();
      await running;
      rest.close();
      srv.close();
    }
  });

  it('replays the cache to late handlers, resyncs periodically, and unsubscribes', async () => {
    const srv = await scripted({ list: [list('3', [cm('a', '1'), cm('b', '2')])], watch: [] });
    const ac = new AbortController();
    const inf = new Informer({ rest: srv.rest, resource: { group: '', version: 'v1', resource: 'configmaps' }, resyncPeriodMs: 30 });
    const running = inf.start(ac.signal);
    try {
      await inf.waitForSync();
      const adds: string[] = [];
      let resyncs = 0;
      const off = inf.addEventHandler({ onAdd: (o) => adds.push(o.metadata.name!), onUpdate: (o, n) => void (o === n && resyncs++) });
      assert.deepEqual(adds.sort(), ['a', 'b']);
      await until(() => resyncs >= 4);
      off();
      const after = resyncs;
      // Two more rounds (two objects each) reach a handler still subscribed, none the one that left.
      let later = 0;
      inf.addEventHandler({ onUpdate: (o, n) => void (o === n && later++) });
      await until(() => later >= 4);
      assert.equal(resyncs, after);
    } finally {
      ac.abort();
      await running;
      srv.close();
    }
    assert.equal(await new Informer({ rest: srv.rest, resource: { group: '', version: 'v1', resource: 'x' } }).waitForSync(AbortSignal.abort()), false);
  });
});

describe('Discovery and InformerFactory', () => {
  it('maps kinds from legacy discovery, refreshes for unknown kinds, and remembers misses briefly', async () => {
    let calls = 0;
    let crdInstalled = false;
    const server = http.createServer((req, res) => {
      calls++;
      const body: Record<string, unknown> = {
        '/api': { kind: 'APIVersions', versions: ['v1'] },
        '/apis': { kind: 'APIGroupList', groups: [{ name: 'x.io', versions: [{ groupVersion: 'x.io/v1', version: 'v1' }] }] },
        '/api/v1': { resources: [{ name: 'endpoints/status', kind: 'Endpoints', namespaced: true }, { name: 'endpoints', kind: 'Endpoints', namespaced: true, verbs: ['get'] }] },
        '/apis/x.io/v1': { resources: crdInstalled ? [{ name: 'proxies', kind: 'Proxy', namespaced: false, verbs: ['list', 'watch'] }] : [] },
      };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body[req.url!.split('?')[0]!] ?? {}));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const rest = new RestClient({ server: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), tls: {}, authHeaders: async () => ({}), invalidate: () => undefined });
    try {
      const proxy = { group: 'x.io', version: 'v1', kind: 'Proxy' };
      // Misses are remembered for a minute here, so "recent" holds however slow this machine is.
      const d = new Discovery(rest, { missTtlMs: 60_000 });
      const ep = await d.resourceFor({ group: '', version: 'v1', kind: 'Endpoints' });
      assert.deepEqual({ ...ep }, { group: '', version: 'v1', resource: 'endpoints', kind: 'Endpoints', namespaced: true, verbs: ['get'], subresources: ['status'] });
      await assert.rejects(d.resourceFor(proxy), /no resource for kind Proxy/);
      const brief = new Discovery(rest, { missTtlMs: 100 });
      await assert.rejects(brief.resourceFor(proxy), /no resource for kind Proxy/);
      crdInstalled = true;
      const before = calls;
      await assert.rejects(d.resourceFor(proxy));
      assert.equal(calls, before, 'a recent miss does not hit the server again');
      // A miss is remembered only briefly: later, the server is asked again and the kind found.
      await until(async () => (await brief.resourceFor(proxy).catch(() => undefined))?.resource === 'proxies');

      const factory = new InformerFactory({ cluster: 'c', rest, discovery: d });
      const scope = { group: '', version: 'v1', resource: 'configmaps', namespace: 'n' };
      assert.equal(factory.forResource(scope), factory.forResource({ ...scope }));
      assert.notEqual(factory.forResource(scope), factory.forResource({ ...scope, labelSelector: 'a=b' }));
      assert.equal(factory.all().length, 2);
    } finally {
      rest.close();
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('Informer delete events and sync', () => {
  it('hands delete handlers the final state from the event, not the cached one', async () => {
    const finalState = { metadata: { name: 'a', namespace: 'n', resourceVersion: '15', deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [] } };
    const srv = await scripted({ list: [list('10', [cm('a', '5')])], watch: [stream(line('DELETED', finalState))] });
    const ac = new AbortController();
    const inf = new Informer({ rest: srv.rest, resource: { group: '', version: 'v1', resource: 'configmaps' }, namespace: 'n' });
    const deleted: KubeObject[] = [];
    inf.addEventHandler({ onDelete: (o, unknown) => !unknown && deleted.push(o) });
    void inf.start(ac.signal);
    await until(() => deleted.length === 1);
    assert.equal(deleted[0]?.metadata.resourceVersion, '15');
    assert.equal(deleted[0]?.metadata.deletionTimestamp, '2026-01-01T00:00:00Z');
    assert.ok(Object.isFrozen(deleted[0]), 'handlers get frozen objects, like the cache');
    assert.equal(inf.store.size, 0);
    ac.abort();
    srv.close();
  });

  it('caches and hands out every listed, changed and deleted object as the transform leaves it', async () => {
    const owned = (name: string, rv: string): KubeObject => ({ metadata: { ...cm(name, rv).metadata, managedFields: [{ manager: 'x' }] } });
    const srv = await scripted({ list: [list('10', [owned('a', '5')])], watch: [stream(line('ADDED', owned('b', '11')) + line('MODIFIED', owned('a', '12')) + line('DELETED', owned('b', '13')))] });
    const ac = new AbortController();
    const inf = new Informer({ rest: srv.rest, resource: { group: '', version: 'v1', resource: 'configmaps' }, namespace: 'n', transform: withoutManagedFields });
    const seen: KubeObject[] = [];
    inf.addEventHandler({ onAdd: (o) => seen.push(o), onUpdate: (_a, b) => seen.push(b), onDelete: (o) => seen.push(o) });
    void inf.start(ac.signal);
    await until(() => seen.length === 4);
    for (const o of [...seen, ...inf.store.list()]) assert.equal(o.metadata.managedFields, undefined);
    assert.deepEqual(seen.map((o) => `${o.metadata.name ?? ''}@${o.metadata.resourceVersion ?? ''}`), ['a@5', 'b@11', 'a@12', 'b@13']);
    ac.abort();
    srv.close();
  });

  it('resolves waitForSync false, not true, when it stops without ever syncing', async () => {
    const failing: Step = (_u, res) => res.writeHead(500).end('{"kind":"Status","code":500}');
    const srv = await scripted({ list: [failing, failing, failing, failing, failing], watch: [] });
    const ac = new AbortController();
    const inf = new Informer({ rest: srv.rest, resource: { group: '', version: 'v1', resource: 'configmaps' }, backoff: { initialMs: 5, maxMs: 10 } });
    const waiting = inf.waitForSync();
    const running = inf.start(ac.signal);
    await until(() => srv.urls.length >= 1);
    ac.abort();
    await running;
    assert.equal(await waiting, false);
    assert.equal(await inf.waitForSync(), false, 'asked after it stopped');
    assert.equal(inf.hasSynced(), false);
    srv.close();
  });
});

describe('InformerFactory leases', () => {
  it('shares one informer per scope, stops it when the last lease is released, and never stops a pinned one', async () => {
    const srv = await scripted({ list: [list('1', [cm('a', '1')]), list('2', []), list('3', [])], watch: [] });
    const ac = new AbortController();
    const factory = new InformerFactory({ cluster: 'c', rest: srv.rest });
    factory.start(ac.signal);
    const scope = { group: '', version: 'v1', resource: 'configmaps', namespace: 'n' };
    const a = factory.acquire(scope);
    const b = factory.acquire({ ...scope });
    assert.equal(a.informer, b.informer);
    assert.equal(await a.informer.waitForSync(), true);
    a.release();
    a.release(); // a second release of the same lease counts once
    assert.equal(factory.all().length, 1, 'still used by b');
    b.release();
    assert.equal(factory.all().length, 0);
    assert.equal(await b.informer.waitForSync(), true, 'a stopped informer that had synced keeps saying so');
    const c = factory.acquire(scope);
    assert.notEqual(c.informer, a.informer, 'a new lease after the last release starts afresh');
    const pinned = factory.forResource(scope);
    assert.equal(pinned, c.informer);
    c.release();
    assert.equal(factory.all().length, 1, 'pinned by forResource');
    ac.abort();
    srv.close();
  });
});

describe('Informer seeded from another cache', () => {
  const resource = { group: '', version: 'v1', resource: 'configmaps' };
  const owned = (name: string, rv: string, owner: string): KubeObject => ({ metadata: { name, namespace: 'n', resourceVersion: rv, labels: { owner } } });
  const asked = (urls: URL[]): string[] => urls.map((u) => `${u.searchParams.get('watch') ? 'watch' : 'list'} rv=${u.searchParams.get('resourceVersion') ?? ''} selector=${u.searchParams.get('labelSelector') ?? ''}`);
  const silence: Step = (_u, res) => res.writeHead(200).flushHeaders();

  /** A wide informer listed at 10 and watching at 12, and what its server was asked. */
  async function wideAt12(more: { list?: Step[]; watch?: Step[] } = {}, budget?: CacheBudget) {
    const srv = await scripted({
      list: [list('10', [owned('a', '5', 'p'), owned('b', '6', 'x'), owned('c', '7', 'p')]), ...(more.list ?? [])],
      watch: [stream(line('BOOKMARK', { metadata: { resourceVersion: '12' } })), silence, ...(more.watch ?? [])],
    });
    const ac = new AbortController();
    const wide = new Informer({ rest: srv.rest, resource, namespace: 'n', ...(budget ? { budget } : {}) });
    void wide.start(ac.signal);
    // Its second watch asked for: the next watch step is the seeded informer's.
    await until(() => wide.lastResourceVersion === '12' && srv.urls.length >= 3);
    return { srv, ac, wide };
  }

  it("takes what the other holds that its own selector admits, synced as it starts, and watches on from the other's version", async () => {
    const budget = new CacheBudget({ limits: { maxObjects: 10, maxBytes: 1e6 } });
    const { srv, ac, wide } = await wideAt12({ watch: [stream(line('MODIFIED', owned('c', '13', 'p')))] }, budget);
    try {
      const narrow = new Informer({ rest: srv.rest, resource, namespace: 'n', labelSelector: 'owner notin (x)', budget, seedFrom: wide });
      const added: string[] = [];
      narrow.addEventHandler({ onAdd: (o) => added.push(o.metadata.name ?? '') });
      const lastHeard = wide.lastEventAt;
      void narrow.start(ac.signal);
      assert.equal(narrow.hasSynced(), true, 'synced as start returns');
      assert.equal(narrow.complete, true);
      assert.deepEqual(narrow.store.keys().sort(), ['n/a', 'n/c']);
      assert.deepEqual(added.sort(), ['a', 'c'], 'handlers are told of the seeded objects as of a listing');
      assert.equal(narrow.lastResourceVersion, '12');
      assert.equal(narrow.lastEventAt, lastHeard, 'a seed is no word from the server');
      assert.equal(narrow.chargedFor('n/a'), wide.chargedFor('n/a'));
      assert.equal(budget.objects, 5, 'charged to the budget as a listing is');
      await until(() => narrow.store.get('n/c')?.metadata.resourceVersion === '13');
      assert.deepEqual(asked(srv.urls).slice(0, 4), ['list rv= selector=', 'watch rv=10 selector=', 'watch rv=12 selector=', 'watch rv=12 selector=owner notin (x)']);
      assert.ok(!asked(srv.urls).slice(1).some((a) => a.startsWith('list')), 'no listing for the seeded one');
    } finally {
      ac.abort();
      srv.close();
    }
  });

  it('lists after a 410 on its first watch, as any informer does, not from the seed again', async () => {
    const gone = stream(line('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' }));
    const { srv, ac, wide } = await wideAt12({ list: [list('20', [owned('a', '15', 'p')])], watch: [gone] });
    try {
      const narrow = new Informer({ rest: srv.rest, resource, namespace: 'n', labelSelector: 'owner notin (x)', seedFrom: wide });
      void narrow.start(ac.signal);
      await until(() => narrow.lastResourceVersion === '20');
      assert.deepEqual(narrow.store.keys(), ['n/a']);
      assert.deepEqual(asked(srv.urls).slice(3, 5), ['watch rv=12 selector=owner notin (x)', 'list rv= selector=owner notin (x)']);
    } finally {
      ac.abort();
      srv.close();
    }
  });

  it('lists instead when the other is not listed, failing, stopped, of another cluster or scope or of no version, or when the budget cannot hold the seed', async () => {
    // By namespace and selector: an unfiltered listing holds three objects at 10 (of no version in
    // namespace v), a filtered one one object at 30; unfiltered watches in namespace f fail, the
    // others stay open and quiet.
    const ns = (u: URL): string => /\/namespaces\/([^/]+)\//.exec(u.pathname)?.[1] ?? '';
    const three = (n: string): KubeObject[] => [owned('a', '5', 'p'), owned('b', '6', 'x'), owned('c', '7', 'p')].map((o) => ({ ...o, metadata: { ...o.metadata, namespace: n } }));
    const listing: Step = (u, res) => (u.searchParams.get('labelSelector') ? list('30', [{ ...owned('d', '8', 'p'), metadata: { ...owned('d', '8', 'p').metadata, namespace: ns(u) } }]) : list(ns(u) === 'v' ? '' : '10', three(ns(u))))(u, res);
    const watching: Step = (u, res) => (ns(u) === 'f' && !u.searchParams.get('labelSelector') ? stream(line('ERROR', { kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' })) : silence)(u, res);
    const srv = await scripted({ list: Array.from({ length: 20 }, () => listing), watch: Array.from({ length: 20 }, () => watching) });
    const elsewhere = await scripted({ list: [listing], watch: [watching] });
    const ac = new AbortController();
    const started = (o: Partial<InformerOptions> & { namespace: string }, signal = ac.signal): Informer => {
      const inf = new Informer({ rest: srv.rest, resource, backoff: { initialMs: 60_000, maxMs: 60_000 }, ...o });
      void inf.start(signal);
      return inf;
    };
    const narrowOf = (from: Informer, o: Partial<InformerOptions> & { namespace: string }): Informer => started({ labelSelector: 'owner notin (x)', seedFrom: from, ...o });
    try {
      const wide = started({ namespace: 'n' });
      const failing = started({ namespace: 'f' });
      const stopping = new AbortController();
      const stopped = started({ namespace: 's' }, stopping.signal);
      const changes: (string | undefined)[] = [];
      const budget = new CacheBudget({ limits: { maxObjects: 4, maxBytes: 1e6 }, onChange: (why) => changes.push(why) });
      const budgeted = started({ namespace: 'b', budget });
      const versionless = started({ namespace: 'v' });
      const otherCluster = started({ namespace: 'o', rest: elsewhere.rest });
      await until(() => wide.hasSynced() && failing.complete && failing.lastError !== undefined && stopped.hasSynced() && budgeted.hasSynced() && versionless.hasSynced() && otherCluster.hasSynced());
      stopping.abort();
      await stopped.start(stopping.signal);

      const seeded = narrowOf(wide, { namespace: 'n' });
      assert.deepEqual([seeded.hasSynced(), seeded.store.keys().sort()], [true, ['n/a', 'n/c']], 'the control: seeded');
      const cases: [string, Informer, string][] = [
        ['from one never started', narrowOf(new Informer({ rest: srv.rest, resource, namespace: 'n' }), { namespace: 'n' }), 'n'],
        ['from one whose watch fails', narrowOf(failing, { namespace: 'f' }), 'f'],
        ['from one stopped', narrowOf(stopped, { namespace: 's' }), 's'],
        ['from one of another namespace', narrowOf(wide, { namespace: 'm' }), 'm'],
        ['from one of another field selector', narrowOf(wide, { namespace: 'n', fieldSelector: 'metadata.name=d' }), 'n'],
        ['beside a cache the budget could not hold it with', narrowOf(budgeted, { namespace: 'b', budget }), 'b'],
        ['from one whose listing gave no version to go on from', narrowOf(versionless, { namespace: 'v' }), 'v'],
        ['from one of another cluster', narrowOf(otherCluster, { namespace: 'o' }), 'o'],
      ];
      for (const [what, inf] of cases) assert.equal(inf.hasSynced(), false, `not seeded ${what}`);
      for (const [what, inf, n] of cases) {
        await until(() => inf.hasSynced());
        assert.deepEqual(inf.store.keys(), [`${n}/d`], `listed ${what}`);
      }
      assert.deepEqual([budget.exceeded, changes], [undefined, []], 'a seed the budget cannot hold is refused nothing: the listing that fits is taken');
    } finally {
      ac.abort();
      srv.close();
      elsewhere.close();
    }
  });
});

describe('Informer cache budget', () => {
  const big = (name: string, rv: string, size: number): KubeObject => ({ metadata: { name, namespace: 'n', resourceVersion: rv, annotations: { pad: 'x'.repeat(size) } } });
  const resource = { group: '', version: 'v1', resource: 'configmaps' };

  it('refuses a listing that does not fit (nothing cached, not synced, the reason said), and takes it once it fits', async () => {
    const srv = await scripted({ list: [list('1', [cm('a', '1'), cm('b', '1'), cm('c', '1')]), list('2', [cm('a', '2')])], watch: [] });
    const changes: (string | undefined)[] = [];
    const budget = new CacheBudget({ limits: { maxObjects: 2, maxBytes: 1e6 }, onChange: (why) => changes.push(why) });
    const ac = new AbortController();
    const inf = new Informer({ rest: srv.rest, resource, namespace: 'n', budget, backoff: { initialMs: 10, maxMs: 10 } });
    void inf.start(ac.signal);
    await until(() => inf.lastError !== undefined);
    assert.equal(inf.hasSynced(), false);
    assert.equal(inf.store.size, 0);
    assert.match(inf.lastError ?? '', /configmaps in namespace n would take our caches of it past their budget of 2 objects/);
    assert.equal(budget.objects, 0);
    await until(() => inf.hasSynced());
    assert.deepEqual(inf.store.keys(), ['n/a']);
    assert.equal(budget.objects, 1);
    assert.equal(budget.bytes, chargedSize(inf.store.list()[0]));
    assert.equal(inf.chargedFor('n/a'), budget.bytes, 'what an object was charged is told by its key');
    assert.equal(inf.chargedFor('n/b'), undefined);
    assert.equal(budget.exceeded, undefined);
    assert.deepEqual(changes.map((c) => c !== undefined), [true, false]);
    ac.abort();
    srv.close();
  });

  it('keeps what it holds when a watched object would not fit, lists again later, and gives back what goes', async () => {
    const srv = await scripted({
      list: [list('1', [big('a', '1', 100)]), list('3', [big('a', '3', 100)])],
      watch: [stream(line('ADDED', big('b', '2', 10_000))), stream(line('DELETED', big('a', '4', 100)))],
    });
    const budget = new CacheBudget({ limits: { maxObjects: 10, maxBytes: 1000 } });
    const ac = new AbortController();
    const inf = new Informer({ rest: srv.rest, resource, namespace: 'n', budget, backoff: { initialMs: 10, maxMs: 10 } });
    void inf.start(ac.signal);
    await until(() => inf.hasSynced());
    await until(() => inf.lastError !== undefined);
    assert.deepEqual(inf.store.keys(), ['n/a'], 'the object that did not fit was not taken; what was held stays');
    assert.ok(budget.exceeded);
    assert.equal(inf.hasSynced(), true);
    assert.equal(inf.complete, false, "what the cache lacks now is not the server's word");
    // The next listing fits: taken whole, and the refusal is over.
    await until(() => inf.lastResourceVersion === '4');
    assert.equal(inf.complete, true);
    assert.equal(inf.store.size, 0);
    assert.equal(budget.objects, 0);
    assert.equal(budget.bytes, 0);
    assert.equal(inf.chargedFor('n/a'), undefined, 'a deleted object is charged nothing');
    assert.equal(budget.exceeded, undefined);
    ac.abort();
    srv.close();
  });

  it('reports each refused cache on its own, and a parent budget bounds its children together', async () => {
    const changes: (string | undefined)[] = [];
    const all = new CacheBudget({ limits: { maxObjects: 3, maxBytes: 1e6 }, of: 'all peers' });
    const peer = new CacheBudget({ limits: { maxObjects: 10, maxBytes: 1e6 }, onChange: (why) => changes.push(why), parent: all });
    const other = new CacheBudget({ limits: { maxObjects: 10, maxBytes: 1e6 }, parent: all });
    const a = { budgetName: 'configmaps' };
    const b = { budgetName: 'configmaps' };
    other.charge(2, 10, a);
    peer.charge(1, 10, a);
    // Asked first, it says what would not fit, its own bytes or the objects of all, refusing nothing.
    assert.deepEqual([peer.fits(0, 0), peer.fits(1, 0), peer.fits(0, 1e6), all.fits(0, 1e6 - 30)], [true, false, false, true]);
    assert.equal(peer.exceeded, undefined);
    assert.throws(() => peer.charge(1, 10, b), /configmaps would take our caches of all peers past their budget of 3 objects/);
    assert.match(peer.exceeded ?? '', /all peers/, 'the peer says its caches did not fit beside the others');
    // Another cache of the same name fitting clears nothing of the one refused.
    peer.fitted(a);
    assert.ok(peer.exceeded);
    peer.fitted(b);
    assert.equal(peer.exceeded, undefined);
    assert.deepEqual(changes.map((c) => c !== undefined), [true, false]);
    assert.deepEqual([all.objects, peer.objects, other.objects], [3, 1, 2]);
  });

  it('is shared by the informers of a factory, and a stopped informer gives back what it held', async () => {
    const srv = await scripted({ list: [list('1', [cm('a', '1'), cm('b', '1')]), list('1', [cm('x', '1')]), list('1', [cm('x', '1')])], watch: [] });
    const budget = new CacheBudget({ limits: { maxObjects: 2, maxBytes: 1e6 } });
    const ac = new AbortController();
    const factory = new InformerFactory({ cluster: 'peer', rest: srv.rest, budgetFor: () => budget });
    factory.start(ac.signal);
    const first = factory.acquire({ ...resource, namespace: 'n' });
    assert.equal(await first.informer.waitForSync(), true);
    assert.equal(budget.objects, 2);
    const second = factory.acquire({ ...resource, namespace: 'm' });
    await until(() => second.informer.lastError !== undefined);
    assert.equal(second.informer.hasSynced(), false, 'the second scope does not fit beside the first');
    assert.equal(first.informer.store.size, 2, 'and costs the first nothing');
    first.release();
    // Its next listing comes after the backoff of a refused one (a few seconds).
    await until(() => second.informer.hasSynced(), 20_000);
    assert.equal(budget.objects, 1);
    ac.abort();
    srv.close();
  });
});
