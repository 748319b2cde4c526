import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventCorrelator, EventRecorder } from './events.ts';
import type { CoreEvent } from './events.ts';
import type { RestClient } from './rest.ts';

let n = 0;
function ev(over: { name?: string; reason?: string; message?: string; type?: 'Normal' | 'Warning'; at?: string } = {}): CoreEvent {
  const at = over.at ?? new Date(0).toISOString();
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `obj.${n++}`, namespace: 'ns' },
    involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: over.name ?? 'obj', uid: 'u1' },
    reason: over.reason ?? 'Synced',
    message: over.message ?? 'all good',
    type: over.type ?? 'Normal',
    source: { component: 'cluster-controller', host: 'h' },
    reportingComponent: 'cluster-controller',
    reportingInstance: 'h',
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
  };
}

describe('EventCorrelator', () => {
  it('creates the first event and patches count and lastTimestamp of repeats', () => {
    const c = new EventCorrelator();
    const first = c.observe(ev());
    assert.equal(first.action, 'create');
    const firstName = first.action === 'create' ? first.event.metadata.name : '';
    const second = c.observe(ev({ at: '2026-01-01T00:00:01.000Z' }));
    assert.equal(second.action, 'patch');
    if (second.action !== 'patch') return;
    assert.equal(second.event.metadata.name, firstName);
    assert.deepEqual(second.patch, { count: 2, lastTimestamp: '2026-01-01T00:00:01.000Z', message: 'all good' });
    const third = c.observe(ev());
    assert.equal(third.action === 'patch' && third.patch.count, 3);
  });

  it('keeps different reasons, types and objects apart', () => {
    const c = new EventCorrelator();
    assert.equal(c.observe(ev()).action, 'create');
    assert.equal(c.observe(ev({ reason: 'Other' })).action, 'create');
    assert.equal(c.observe(ev({ type: 'Warning' })).action, 'create');
    assert.equal(c.observe(ev({ name: 'other-object' })).action, 'create');
  });

  it('combines a flood of similar events with different messages into one', () => {
    const c = new EventCorrelator({ maxSimilar: 3 });
    assert.equal(c.observe(ev({ message: 'm1' })).action, 'create');
    assert.equal(c.observe(ev({ message: 'm2' })).action, 'create');
    const combined = c.observe(ev({ message: 'm3' }));
    assert.equal(combined.action, 'create');
    assert.match(combined.action === 'create' ? combined.event.message : '', /^\(combined from similar events\): m3$/);
    const next = c.observe(ev({ message: 'm4' }));
    assert.equal(next.action, 'patch');
    assert.equal(next.action === 'patch' && next.patch.count, 2);
  });

  it('remembers at most maxSimilar messages of a flood, and still combines it', () => {
    const c = new EventCorrelator({ maxSimilar: 3, burst: 1_000_000 });
    for (let i = 0; i < 10_000; i++) c.observe(ev({ message: `object ${i} reconciled` }));
    assert.equal(c.observe(ev({ message: 'one more' })).action, 'patch');
    // What the correlator holds is its own business, but unbounded it is a leak: look inside.
    const groups = (c as unknown as { similar: { map: Map<string, { messages: Set<string> }> } }).similar.map;
    assert.deepEqual([...groups.values()].map((g) => g.messages.size), [3]);
  });

  it('rate-limits per object and reason: burst, then one per refill period', () => {
    let now = 0;
    const c = new EventCorrelator({ burst: 3, refillMs: 1000, now: () => now });
    // What the filter will drop is known before an event is built.
    const involved = ev().involvedObject;
    const drops = (over: { name?: string; reason?: string } = {}): boolean => c.wouldDrop('cluster-controller', 'h', { ...involved, name: over.name ?? 'obj' }, over.reason ?? 'Synced');
    const actions = Array.from({ length: 5 }, () => [drops(), c.observe(ev()).action]);
    assert.deepEqual(actions, [
      [false, 'create'],
      [false, 'patch'],
      [false, 'patch'],
      [true, 'drop'],
      [true, 'drop'],
    ]);
    assert.deepEqual([drops({ name: 'other' }), drops({ reason: 'Failed' }), c.wouldDrop('another-component', 'h', involved, 'Synced')], [false, false, false]);
    // Another object has its own bucket, and so has another reason on the same object: a flood of
    // Normal events never hides the object's first Warning.
    assert.equal(c.observe(ev({ name: 'other' })).action, 'create');
    assert.equal(c.observe(ev({ type: 'Warning', reason: 'Failed', message: 'broken' })).action, 'create');
    now += 1000;
    assert.equal(drops(), false);
    assert.equal(c.observe(ev()).action, 'patch');
    assert.equal(drops(), true);
    assert.equal(c.observe(ev()).action, 'drop');
  });

  it('forgets the oldest keys beyond maxKeys', () => {
    const c = new EventCorrelator({ maxKeys: 2 });
    c.observe(ev({ name: 'a' }));
    c.observe(ev({ name: 'b' }));
    c.observe(ev({ name: 'c' }));
    assert.equal(c.observe(ev({ name: 'a' })).action, 'create');
    assert.equal(c.observe(ev({ name: 'c' })).action, 'patch');
  });
});

describe('EventRecorder', () => {
  it('builds nothing for an event the spam filter drops, and drops the same ones as before', async () => {
    const created: CoreEvent[] = [];
    const rest = { create: async (_ref: unknown, _ns: unknown, e: CoreEvent) => void created.push(e) } as unknown as RestClient;
    const correlator = new EventCorrelator({ burst: 2, refillMs: 3_600_000 });
    let observed = 0;
    const observe = correlator.observe.bind(correlator);
    correlator.observe = (e) => (observed++, observe(e));
    const recorder = new EventRecorder({ rest, component: 'c', host: 'h', reportingInstance: 'h', correlator });
    const ac = new AbortController();
    const running = recorder.start(ac.signal);
    // No name, and a reason longer than an Event takes: the filter knows the object and reason as the built Event names them.
    const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', uid: 'u' } };
    const reason = 'R'.repeat(300);
    for (let i = 0; i < 5; i++) recorder.event(obj, 'Normal', reason, `message ${i}`);
    recorder.event({ ...obj, metadata: { ...obj.metadata, uid: 'other' } }, 'Normal', reason, 'another object');
    while (created.length < 3) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    await running;
    assert.equal(observed, 3, 'the two events of the burst, then only the other object\'s');
    assert.deepEqual(
      created.map((e) => [e.involvedObject.uid, e.message]),
      [
        ['u', 'message 0'],
        ['u', 'message 1'],
        ['other', 'another object'],
      ],
    );
  });

  it('clips reason and message, a combined message too', async () => {
    const created: CoreEvent[] = [];
    const rest = { create: async (_ref: unknown, _ns: unknown, e: CoreEvent) => void created.push(e) } as unknown as RestClient;
    const recorder = new EventRecorder({ rest, component: 'c', host: 'h', reportingInstance: 'h', correlator: new EventCorrelator({ maxSimilar: 2 }) });
    const ac = new AbortController();
    const running = recorder.start(ac.signal);
    const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' } };
    recorder.event(obj, 'Warning', 'R'.repeat(300), 'a'.repeat(5000));
    recorder.event(obj, 'Warning', 'R'.repeat(300), 'b'.repeat(5000));
    recorder.event(obj, 'Warning', 'Short', 'fine');
    while (created.length < 3) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    await running;
    const [first, combined, short] = created;
    assert.match(first!.reason, /^R{105}… \(195 more characters\)$/);
    assert.match(first!.message, /^a{968}… \(4032 more characters\)$/);
    assert.match(combined!.message, /^\(combined from similar events\): b{968}… \(4032 more characters\)$/);
    assert.equal(combined!.message.length, 1024);
    assert.deepEqual([short!.reason, short!.message], ['Short', 'fine']);
  });
});
