import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, type ApiResource, type Discovery, type KubeObject, type ObjectClient } from '../kube/index.ts';
import { CopyWriter, refusedCopy } from './writer.ts';

const CONFIGMAPS: ApiResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [], subresources: [] };
const desired: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' } };
const at = (resourceVersion: string): KubeObject => ({ ...desired, metadata: { ...desired.metadata, uid: 'u1', resourceVersion } });
/** For writers that never look into a namespace. */
const NO_DISCOVERY = {} as Discovery;

/** A writer whose creates answer when the test says (only the bookkeeping around writes is under test here). */
function writerWithPendingCreate(): { writer: CopyWriter; missed: KubeObject[]; answer: (o: KubeObject) => void; fail: (e: Error) => void } {
  const missed: KubeObject[] = [];
  let answer!: (o: KubeObject) => void;
  let fail!: (e: Error) => void;
  const rest = { create: () => new Promise<KubeObject>((res, rej) => ((answer = res), (fail = rej))) } as unknown as ObjectClient;
  const writer = new CopyWriter(rest, NO_DISCOVERY);
  writer.listen({ copyChanged: (c) => missed.push(c) });
  return { writer, missed, answer: (o) => answer(o), fail: (e) => fail(e) };
}

describe('CopyWriter echoes', () => {
  const signal = new AbortController().signal;

  it('knows the echo of its write once, whether it comes after the answer or before', async () => {
    const after = writerWithPendingCreate();
    const w1 = after.writer.create(CONFIGMAPS, desired, signal);
    after.answer(at('5'));
    await w1;
    assert.equal(after.writer.consumeEcho(at('5')), true);
    assert.equal(after.writer.consumeEcho(at('5')), false, 'forgotten once seen');
    assert.equal(after.writer.consumeEcho(at('6')), false, 'a later change is not ours');

    const before = writerWithPendingCreate();
    const w2 = before.writer.create(CONFIGMAPS, desired, signal);
    assert.equal(before.writer.consumeEcho(at('5')), true, 'held while the write is on the way');
    before.answer(at('5'));
    await w2;
    assert.deepEqual(before.missed, [], 'it was the echo');
    assert.equal(before.writer.consumeEcho(at('5')), false, 'and it is not expected again');
  });

  it('lets the echo of a write through once a reconcile decided on an older version of the copy', async () => {
    const w = writerWithPendingCreate();
    const write = w.writer.create(CONFIGMAPS, desired, signal);
    w.answer(at('5'));
    await write;
    w.writer.forgetEcho(at('4'));
    assert.equal(w.writer.consumeEcho(at('5')), false, 'the decision on version 4 was made after the write: its echo is news');
  });

  it('hands on what came during a write and was not its echo, and everything when the write failed', async () => {
    const other = writerWithPendingCreate();
    const w1 = other.writer.create(CONFIGMAPS, desired, signal);
    assert.equal(other.writer.consumeEcho(at('4')), true);
    other.answer(at('5'));
    await w1;
    assert.deepEqual(other.missed, [at('4')]);

    const failed = writerWithPendingCreate();
    const w2 = failed.writer.create(CONFIGMAPS, desired, signal);
    assert.equal(failed.writer.consumeEcho(at('4')), true);
    failed.fail(new Error('refused'));
    await assert.rejects(w2, /refused/);
    assert.deepEqual(failed.missed, [at('4')]);
    assert.equal(failed.writer.consumeEcho(at('4')), false, 'no window left open');
  });

  it('holds nothing for another place', async () => {
    const t = writerWithPendingCreate();
    const w = t.writer.create(CONFIGMAPS, desired, signal);
    assert.equal(t.writer.consumeEcho({ ...at('5'), metadata: { ...at('5').metadata, name: 'b' } }), false);
    t.answer(at('5'));
    await w;
  });
});

describe('CopyWriter deletes', () => {
  const signal = new AbortController().signal;
  /** A writer whose delete answers `answer` and records the preconditions it was sent. */
  const deleting = (answer: () => Promise<unknown>) => {
    const sent: unknown[] = [];
    const rest = { delete: (_r: unknown, _ns: unknown, _n: unknown, opts: { preconditions?: unknown }) => (sent.push(opts.preconditions), answer()) } as unknown as ObjectClient;
    return { writer: new CopyWriter(rest, NO_DISCOVERY), sent };
  };

  it('tells a deleted copy from one already gone and one changed since it was read (to be decided on again)', async () => {
    const ok = deleting(() => Promise.resolve({}));
    assert.equal(await ok.writer.delete(CONFIGMAPS, at('7'), signal, { exactVersion: true }), 'deleted');
    assert.deepEqual(ok.sent, [{ uid: 'u1', resourceVersion: '7' }], 'exactly the version that was read');
    assert.equal(await deleting(() => Promise.reject(new ApiError({ code: 404, method: 'DELETE', path: 'a' }))).writer.delete(CONFIGMAPS, at('7'), signal), 'gone');
    assert.equal(await deleting(() => Promise.reject(new ApiError({ code: 409, method: 'DELETE', path: 'a' }))).writer.delete(CONFIGMAPS, at('7'), signal, { exactVersion: true }), 'changed');
    await assert.rejects(deleting(() => Promise.reject(new ApiError({ code: 403, method: 'DELETE', path: 'a' }))).writer.delete(CONFIGMAPS, at('7'), signal), /403|Forbidden|DELETE/);
  });
});

describe('refusedCopy', () => {
  const refusal = (code: number, reason: string, message: string): ApiError => new ApiError({ code, reason, message, method: 'POST', path: '/api/v1/namespaces/ns/configmaps' });

  it("says why the API server refused a copy as invalid, without the request's method and path", () => {
    assert.equal(refusedCopy(refusal(422, 'Invalid', 'ConfigMap "-x" is invalid: metadata.name: Invalid value')), '422 Invalid: ConfigMap "-x" is invalid: metadata.name: Invalid value');
    assert.equal(refusedCopy(refusal(400, 'BadRequest', 'ConfigMap in version "v1" cannot be handled')), '400 BadRequest: ConfigMap in version "v1" cannot be handled');
    // Server-side apply answers a field of the wrong type with a 500.
    assert.match(refusedCopy(refusal(500, 'InternalError', 'failed to create typed patch object (ns/a; /v1, Kind=ConfigMap): .metadata.labels.x: expected string')) ?? '', /^500 InternalError: failed to create typed patch object/);
  });

  it('leaves every other failure to be retried', () => {
    for (const e of [refusal(500, 'InternalError', 'etcdserver: leader changed'), refusal(409, 'Conflict', 'the object has been modified'), refusal(429, 'TooManyRequests', ''), refusal(403, 'Forbidden', ''), new Error('socket hang up')]) {
      assert.equal(refusedCopy(e), undefined, e.message);
    }
  });
});


describe('CopyWriter: a Namespace copy', () => {
  const signal = new AbortController().signal;
  const NAMESPACES: ApiResource = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, verbs: [], subresources: [] };
  const owner = 'peer-id';
  const mark = { 'cluster-registry.k8s.cisco.com/resource-owner-cluster-id': owner };
  const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team', uid: 'ns1', resourceVersion: '5', annotations: mark, labels: mark } };
  /** A cluster whose namespace `team` holds `items` of one kind: what the writer sends it is recorded. */
  function cluster(items: KubeObject[]): { writer: CopyWriter; sent: string[] } {
    const sent: string[] = [];
    const rest = {
      list: () => Promise.resolve({ items, metadata: {} }),
      delete: () => (sent.push('delete'), Promise.resolve({})),
      patch: (_r: unknown, _ns: unknown, _n: unknown, _t: unknown, body: unknown) => (sent.push(`patch ${JSON.stringify(body)}`), Promise.resolve({})),
    } as unknown as ObjectClient;
    const configmaps: ApiResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: ['list'], subresources: [] };
    const discovery = { refresh: () => Promise.resolve(), all: () => Promise.resolve([configmaps]) } as unknown as Discovery;
    return { writer: new CopyWriter(rest, discovery), sent };
  }
  const cm = (name: string, annotations?: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, uid: name, ...(annotations ? { annotations } : {}) } });

  it('goes when it holds only what Kubernetes makes and copies of the same owner that go with it', async () => {
    const c = cluster([cm('kube-root-ca.crt'), cm('copied', mark)]);
    assert.equal(await c.writer.delete(NAMESPACES, ns, signal, { ownersCopiesGo: true }), 'deleted');
    assert.deepEqual(c.sent, ['delete']);
  });

  it("stays, no copy any more, when it holds what is not going: another's object, or the owner's copies that stay", async () => {
    for (const [items, ownersCopiesGo] of [[[cm('mine')], true], [[cm('copied', mark)], false], [[cm('copied', { ...mark, 'cluster-registry.k8s.cisco.com/resource-sync-disabled': '' })], true], [[cm('theirs', { 'cluster-registry.k8s.cisco.com/resource-owner-cluster-id': 'other' })], true]] as const) {
      const c = cluster([...items]);
      const outcome = await c.writer.delete(NAMESPACES, ns, signal, { ownersCopiesGo });
      assert.ok(typeof outcome === 'object' && /configmaps/.test(outcome.kept), JSON.stringify(outcome));
      assert.equal(c.sent.length, 1);
      assert.match(c.sent[0] ?? '', /^patch .*"resourceVersion":"5".*resource-owner-cluster-id":null/);
    }
  });
});

describe('CopyWriter: an update', () => {
  it(
    'applies over exactly the copy it was decided on, by its uid as well as its version',
    async () => {
      const sent: KubeObject[] = [];
      const rest = { apply: (_r: unknown, _ns: unknown, body: KubeObject) => (sent.push(body), Promise.resolve(body)) } as unknown as ObjectClient;
      await new CopyWriter(rest, NO_DISCOVERY).update(CONFIGMAPS, desired, at('5'), new AbortController().signal);
      assert.deepEqual([sent[0]?.metadata.uid, sent[0]?.metadata.resourceVersion], ['u1', '5']);
    },
  );
});
