import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RULE_STATUS_LIMITS } from '../core/api/index.ts';
import { metaTime } from '../core/api/time.ts';
import type { Condition, ResourceSyncRule, ResourceSyncRuleStatus } from '../core/api/types.ts';
import { Discovery, InformerFactory, silentLogger, type RestClient } from '../kube/index.ts';
import { ruleState, type RuleState } from '../core/rules/index.ts';
import { eventually } from '../../test/support/eventually.ts';
import { MemoryApiServer } from '../../test/support/sync-apiserver.ts';
import { Binding, type BindingPhase } from './binding.ts';
import { PeerFeatures } from './features.ts';
import { phaseWarning, RULE_FAILED_ON_PEER, RuleStatusReporter } from './status.ts';

const spec = { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{}] };
// As the informer shows it once a status was written: only a dirty rule is written again.
const object: ResourceSyncRule = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name: 'r', uid: 'u', generation: 1 }, spec, status: { observedGeneration: 1 } };

/** Runs the reporter for a few intervals over one rule. */
async function runFor(reporter: RuleStatusReporter, rule: RuleState, intervals: number): Promise<void> {
  const controller = new AbortController();
  let passes = 0;
  await reporter.run(() => (++passes > intervals ? (controller.abort(), []) : [rule]), 1, controller.signal);
}

describe('RuleStatusReporter', () => {
  it('writes an outcome that arrives while the previous status write is on the way', async () => {
    const written: ResourceSyncRuleStatus[] = [];
    const box: { reporter?: RuleStatusReporter } = {};
    const rest = {
      patchStatus: async (_ref: unknown, _ns: unknown, _name: string, _type: string, body: { status: ResourceSyncRuleStatus }) => {
        written.push(body.status);
        // The first write is on the way when an object of the rule fails.
        if (written.length === 1) box.reporter?.outcome('r', 'peer', 'ns/o', 'failed', { error: 'ns/o: refused' });
        return {};
      },
    } as unknown as RestClient;
    const reporter = (box.reporter = new RuleStatusReporter({ rest, log: silentLogger }));
    reporter.outcome('r', 'peer', 'ns/first', 'synced');
    await runFor(reporter, ruleState('r', spec, object, 'cluster-registry'), 5);
    assert.equal(written.length, 2, 'the outcome that came during the first write was never written');
    assert.equal(written[1]?.clusters?.[0]?.lastError, 'ns/o: refused');
  });

  it('retries a status write that failed', async () => {
    let calls = 0;
    const rest = {
      patchStatus: async () => {
        if (++calls === 1) throw new Error('connection reset');
        return {};
      },
    } as unknown as RestClient;
    const reporter = new RuleStatusReporter({ rest, log: silentLogger });
    reporter.outcome('r', 'peer', 'ns/o', 'synced');
    await runFor(reporter, ruleState('r', spec, object, 'cluster-registry'), 5);
    assert.equal(calls, 2);
  });
});

describe('phaseWarning', () => {
  it('warns of a rule that cannot run against a peer, in the words of its status, and of nothing else', () => {
    const peer = { name: 'cluster2' };
    const message = 'kind Gadget of fuzz.example.com/v1 is not served here (is its CustomResourceDefinition installed?)';
    assert.deepEqual(phaseWarning({ phase: 'failed', message, peer }), { reason: RULE_FAILED_ON_PEER, message: `cluster2: ${message}` });
    for (const phase of ['starting', 'featuresUnmet', 'active'] as const) assert.equal(phaseWarning({ phase, message: 'anything', peer }), undefined, phase);
  });
});

// ------------------------------------------------------------------ over an API server

const NS = 'cluster-registry';
const T0 = new Date('2030-01-01T00:00:00Z');

describe('RuleStatusReporter, what it reports', () => {
  let server: MemoryApiServer;
  let discovery: Discovery;
  before(async () => {
    server = await MemoryApiServer.start();
    discovery = new Discovery(server.rest);
  });
  after(() => server.close());

  /** A rule named `name` (invalid when told), as the engine runs it. */
  const ruleNamed = (name: string, o: { invalid?: boolean; generation?: number } = {}): RuleState => {
    const s = o.invalid ? { ...spec, rules: [{ match: [{ content: [{ key: '', value: 'x' }] }] }] } : spec;
    return ruleState(name, s, { ...object, metadata: { name, uid: `uid-${name}`, generation: o.generation ?? 1 }, spec: s, status: {} }, NS);
  };

  /** The rule's binding to `peer`, in that phase (never started: the reporter only reads it). */
  const bound = (rule: RuleState, peer: string, phase: BindingPhase, message = '', denied = false): Binding => {
    const informers = new InformerFactory({ cluster: peer, rest: server.rest });
    const b = new Binding({
      rule,
      peer: { name: peer, id: `${peer}-uid`, clients: { rest: server.rest, informers, discovery } },
      features: new PeerFeatures(informers),
      local: server.rest,
      localDiscovery: discovery,
      localClusterID: 'local-uid',
      rateLimit: { ratePerSecond: 1, burst: 1, maxKeys: 1 },
      events: { sourceChanged: () => undefined, everythingOf: () => undefined, leftOut: () => undefined },
      onPhase: () => undefined,
      lostAt: () => undefined,
      settledOwners: () => new Set(),
      log: silentLogger,
    });
    Object.assign(b, { phase, message, denied });
    return b;
  };

  const reporter = (): RuleStatusReporter => new RuleStatusReporter({ rest: server.rest, log: silentLogger, now: () => T0 });
  const condition = (status: ResourceSyncRuleStatus, type: string): Condition | undefined => status.conditions?.find((c) => c.type === type);

  it('says a rule whose peers are all active and in sync is valid, permitted and synced', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    rep.phase(bound(r, 'a', 'active'));
    rep.outcome('r', 'a', 'ns/x', 'synced');
    const status = rep.statusOf(r, undefined);
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [
        ['Valid', 'True', 'RuleIsValid'],
        ['Permitted', 'True', 'AccessGranted'],
        ['Synced', 'True', 'AllPeersSynced'],
      ],
    );
  });

  it('says an invalid rule is not valid, with its issues, and syncs nothing', () => {
    const r = ruleNamed('r', { invalid: true });
    const status = reporter().statusOf(r, undefined);
    assert.deepEqual(condition(status, 'Valid'), { type: 'Valid', status: 'False', reason: 'RuleIsInvalid', message: 'spec.rules[0].match[0].content[0].key: must be a non-empty gjson path', lastTransitionTime: metaTime(T0), observedGeneration: 1 });
    assert.equal(condition(status, 'Synced')?.message, 'the rule is invalid');
  });

  it('says a rule a peer denies access to is not permitted, naming the peer and the denial', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    rep.phase(bound(r, 'a', 'active'));
    rep.phase(bound(r, 'b', 'failed', "the peer's credentials may not list configmaps cluster-wide", true));
    const permitted = condition(rep.statusOf(r, undefined), 'Permitted');
    assert.deepEqual([permitted?.status, permitted?.reason, permitted?.message], ['False', 'AccessDenied', "b: the peer's credentials may not list configmaps cluster-wide"]);
  });

  it('says a rule whose binding failed for another reason is permitted but not synced, naming the peer and the reason', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    rep.phase(bound(r, 'a', 'failed', 'kind Widget of example.com/v1 is not served on the peer'));
    const status = rep.statusOf(r, undefined);
    assert.equal(condition(status, 'Permitted')?.status, 'True');
    assert.deepEqual([condition(status, 'Synced')?.status, condition(status, 'Synced')?.message], ['False', 'a: kind Widget of example.com/v1 is not served on the peer']);
  });

  it('says a rule with objects that failed on a peer is not synced, with the last error there', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    rep.phase(bound(r, 'a', 'active'));
    rep.outcome('r', 'a', 'ns/x', 'failed', { error: 'ns/x: refused' });
    rep.outcome('r', 'a', 'ns/y', 'synced');
    assert.deepEqual([condition(rep.statusOf(r, undefined), 'Synced')?.status, condition(rep.statusOf(r, undefined), 'Synced')?.message], ['False', 'a: ns/x: refused']);
  });

  it('shows each binding phase as the state of its peer', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    for (const phase of ['starting', 'featuresUnmet', 'failed', 'active'] as const) rep.phase(bound(r, phase, phase));
    assert.deepEqual(
      rep.statusOf(r, undefined).clusters?.map((c) => [c.name, c.state]),
      [
        ['active', 'Active'],
        ['failed', 'Failed'],
        ['featuresUnmet', 'Pending'],
        ['starting', 'Pending'],
      ],
    );
  });

  it("shows a peer's cluster ID and the binding's message", () => {
    const r = ruleNamed('r');
    const rep = reporter();
    rep.phase(bound(r, 'a', 'starting', "listing the rule's objects on the peer"));
    assert.deepEqual(rep.statusOf(r, undefined).clusters, [{ name: 'a', clusterID: 'a-uid', state: 'Pending', message: "listing the rule's objects on the peer", matched: 0, synced: 0, failed: 0 }]);
  });

  it('counts the objects matched on each peer, those waiting as not synced', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    rep.outcome('r', 'a', 'ns/x', 'synced');
    rep.outcome('r', 'a', 'ns/y', 'waiting', { error: 'ns/y: waiting for namespace ns' });
    rep.outcome('r', 'a', 'ns/z', 'failed', { error: 'ns/z: refused' });
    rep.outcome('r', 'b', 'ns/x', 'synced');
    assert.deepEqual(
      rep.statusOf(r, undefined).clusters?.map((c) => [c.name, c.matched, c.synced, c.failed]),
      [
        ['a', 3, 1, 2],
        ['b', 1, 1, 0],
      ],
    );
  });

  it('counts an object once however often it is synced', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    for (let i = 0; i < 3; i++) rep.outcome('r', 'a', 'ns/x', 'synced');
    assert.equal(rep.statusOf(r, undefined).clusters?.[0]?.matched, 1);
  });

  it('shows the last error only while some object fails', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    rep.outcome('r', 'a', 'ns/x', 'failed', { error: 'ns/x: refused' });
    assert.equal(rep.statusOf(r, undefined).clusters?.[0]?.lastError, 'ns/x: refused');
    rep.outcome('r', 'a', 'ns/x', 'synced');
    assert.equal(rep.statusOf(r, undefined).clusters?.[0]?.lastError, undefined);
  });

  it('cuts a long error to the length the status allows', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    rep.outcome('r', 'a', 'ns/x', 'failed', { error: 'e'.repeat(5000) });
    const lastError = rep.statusOf(r, undefined).clusters?.[0]?.lastError ?? '';
    assert.equal(lastError.length, RULE_STATUS_LIMITS.maxErrorLength);
    assert.ok(lastError.endsWith('…'));
  });

  it('moves the last sync time only when an object was written', () => {
    const r = ruleNamed('r');
    let now = T0;
    const rep = new RuleStatusReporter({ rest: server.rest, log: silentLogger, now: () => now });
    rep.outcome('r', 'a', 'ns/x', 'synced');
    assert.equal(rep.statusOf(r, undefined).clusters?.[0]?.lastSyncTime, undefined);
    rep.outcome('r', 'a', 'ns/x', 'synced', { wrote: true });
    now = new Date(T0.getTime() + 60_000);
    rep.outcome('r', 'a', 'ns/y', 'synced');
    assert.equal(rep.statusOf(r, undefined).clusters?.[0]?.lastSyncTime, metaTime(T0));
  });

  it('forgets an object no longer matched', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    rep.outcome('r', 'a', 'ns/x', 'failed', { error: 'ns/x: refused' });
    rep.forget('r', 'a', 'ns/x');
    assert.deepEqual(rep.statusOf(r, undefined).clusters?.map((c) => [c.matched, c.failed]), [[0, 0]]);
  });

  it('drops a peer the rule no longer runs on', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    rep.outcome('r', 'a', 'ns/x', 'synced');
    rep.outcome('r', 'b', 'ns/x', 'synced');
    rep.drop('r', 'a');
    assert.deepEqual(rep.statusOf(r, undefined).clusters?.map((c) => c.name), ['b']);
  });

  it('drops every peer of a rule dropped whole', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    rep.outcome('r', 'a', 'ns/x', 'synced');
    rep.drop('r');
    assert.deepEqual(rep.statusOf(r, undefined).clusters, []);
  });

  it('lists at most as many peers as the status allows, in name order', () => {
    const r = ruleNamed('r');
    const rep = reporter();
    const names = Array.from({ length: RULE_STATUS_LIMITS.maxClusters + 5 }, (_, i) => `peer-${String(i).padStart(4, '0')}`);
    for (const n of [...names].reverse()) rep.outcome('r', n, 'ns/x', 'synced');
    assert.deepEqual(
      rep.statusOf(r, undefined).clusters?.map((c) => c.name),
      names.slice(0, RULE_STATUS_LIMITS.maxClusters),
    );
  });

  it('keeps the transition time of a condition whose status held', () => {
    const r = ruleNamed('r');
    let now = T0;
    const rep = new RuleStatusReporter({ rest: server.rest, log: silentLogger, now: () => now });
    const first = rep.statusOf(r, undefined);
    now = new Date(T0.getTime() + 60_000);
    rep.outcome('r', 'a', 'ns/x', 'failed', { error: 'ns/x: refused' });
    const second = rep.statusOf(r, first);
    assert.equal(condition(second, 'Valid')?.lastTransitionTime, metaTime(T0), 'still valid');
    assert.equal(condition(second, 'Synced')?.lastTransitionTime, metaTime(now), 'no longer synced');
  });

  it('records the generation of the rule it reports on', () => {
    const status = reporter().statusOf(ruleNamed('r', { generation: 7 }), undefined);
    assert.equal(status.observedGeneration, 7);
    assert.deepEqual(
      status.conditions?.map((c) => c.observedGeneration),
      [7, 7, 7],
    );
  });
});

describe('RuleStatusReporter, when it writes', () => {
  let server: MemoryApiServer;
  before(async () => {
    server = await MemoryApiServer.start();
  });
  after(() => server.close());

  const ruleObject = (name: string, generation = 1): ResourceSyncRule => ({ ...object, metadata: { name, generation }, status: undefined });
  /** The rule as the engine runs it, from the object the server holds now (as the rule cache would give it). */
  const current = (name: string): RuleState => {
    const obj = server.get(ruleObject(name)) as ResourceSyncRule;
    return ruleState(name, obj.spec, obj, NS);
  };
  const writes = (name: string) => server.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith(`/resourcesyncrules/${name}/status`));

  /** Runs the reporter over `rules` every `intervalMs` while `body` runs; `passes` counts its passes. */
  async function reporting(rep: RuleStatusReporter, rules: () => RuleState[], intervalMs: number, body: (passes: () => number) => Promise<void>): Promise<void> {
    const stop = new AbortController();
    let passes = 0;
    const running = rep.run(
      () => {
        passes++;
        return rules();
      },
      intervalMs,
      stop.signal,
    );
    try {
      await body(() => passes);
    } finally {
      stop.abort();
      await running;
    }
  }

  it('writes the status of a rule at most once per interval, however often its objects change', async () => {
    server.put(ruleObject('often'));
    const rep = new RuleStatusReporter({ rest: server.rest, log: silentLogger });
    let n = 0;
    const churn = setInterval(() => rep.outcome('often', 'a', `ns/o${n++}`, 'synced'), 5);
    try {
      await reporting(rep, () => [current('often')], 100, async () => {
        await eventually('five writes', () => writes('often').length >= 5, 10_000);
      });
    } finally {
      clearInterval(churn);
    }
    const at = writes('often').map((r) => r.at);
    for (let i = 1; i < at.length; i++) assert.ok(at[i]! - at[i - 1]! >= 99, `writes ${at[i]! - at[i - 1]!} ms apart`);
  });

  /** Runs the reporter over `rules` until it has written the status of `name` and made five passes more: how many writes it made. */
  async function writesOnceSettled(rep: RuleStatusReporter, rules: () => RuleState[], name: string): Promise<number> {
    await reporting(rep, rules, 1, async (passes) => {
      await eventually('the status written', () => writes(name).length > 0, 5_000);
      const after = passes() + 5;
      await eventually('five more passes', () => passes() >= after, 5_000);
    });
    return writes(name).length;
  }

  it('writes nothing more while nothing changed', async () => {
    server.put(ruleObject('still'));
    const rep = new RuleStatusReporter({ rest: server.rest, log: silentLogger });
    rep.outcome('still', 'a', 'ns/x', 'synced');
    assert.equal(await writesOnceSettled(rep, () => [current('still')], 'still'), 1);
  });

  it("writes the status again once the rule's generation moved past it", async () => {
    server.put(ruleObject('edited'));
    const rep = new RuleStatusReporter({ rest: server.rest, log: silentLogger });
    await reporting(rep, () => [current('edited')], 1, async () => {
      await eventually('the status written', () => writes('edited').length === 1, 5_000);
      server.put({ ...(server.get(ruleObject('edited')) as ResourceSyncRule), metadata: { name: 'edited', generation: 2 } });
      await eventually('the status of generation 2', () => current('edited').object?.status?.observedGeneration === 2, 5_000);
    });
  });

  it('writes no status for a built-in rule', async () => {
    const rep = new RuleStatusReporter({ rest: server.rest, log: silentLogger });
    const builtin = ruleState('builtin/x', spec, undefined, NS);
    rep.outcome('builtin/x', 'a', 'ns/x', 'synced');
    const before = server.requests.length;
    await reporting(rep, () => [builtin], 1, async (passes) => {
      await eventually('five passes', () => passes() >= 5, 5_000);
    });
    assert.equal(server.requests.length, before);
  });

  it('does not try again the status of a rule gone from the server', async () => {
    const rep = new RuleStatusReporter({ rest: server.rest, log: silentLogger });
    // Still in the rule cache (its status written before), gone from the server.
    const gone = ruleState('gone', spec, { ...ruleObject('gone'), status: { observedGeneration: 1 } }, NS);
    rep.outcome('gone', 'a', 'ns/x', 'synced');
    assert.equal(await writesOnceSettled(rep, () => [gone], 'gone'), 1);
  });

  it('does not write again a status the server pruned, when it comes out the same', async () => {
    server.put(ruleObject('pruned'));
    const rep = new RuleStatusReporter({ rest: server.rest, log: silentLogger, now: () => T0 });
    // The cache shows the rule as a server without our status fields in its schema keeps it.
    const asPruned = ruleState('pruned', spec, { ...ruleObject('pruned'), status: { observedGeneration: 1 } }, NS);
    rep.outcome('pruned', 'a', 'ns/x', 'synced');
    let pass = 0;
    await reporting(
      rep,
      () => {
        // On the second pass the object fails and recovers: the rule is dirty, its status the same.
        if (++pass === 2) {
          rep.outcome('pruned', 'a', 'ns/x', 'failed', { error: 'ns/x: refused' });
          rep.outcome('pruned', 'a', 'ns/x', 'synced');
        }
        return [asPruned];
      },
      1,
      async (passes) => {
        await eventually('five passes', () => passes() >= 5, 5_000);
      },
    );
    assert.equal(writes('pruned').length, 1);
  });
});
