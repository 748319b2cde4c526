import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, formatSourceIdentity, LABELS, type SourceIdentity } from '../core/api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRule } from '../core/api/types.ts';
import { applyBody, desiredCopy, FIELD_MANAGER, recordedFrom, recordOn, ruleState, type OwnershipFacts, type PeerRef } from '../core/rules/index.ts';
import { ApiError, type ApiResource } from '../kube/index.ts';
import { judgeCopy, SECRET_DIFF_WITHHELD, type MemberView } from './copy-judge.ts';
import { clusterShaped } from './peer-access.ts';
import { copiesOf, inRegistryOrder, lastWrite, ownJudgements, recordRow, stateOf, traceOutcome, wellFormed, type TraceRow, type TraceState } from './trace-rows.ts';
import { relayOf, resolveKind } from './trace.ts';

const NAMESPACE = 'cluster-registry';
const MEMBER = '11111111-1111-1111-1111-111111111111';
const OWNER = '22222222-2222-2222-2222-222222222222';
/** A member that passes the owner's object on. */
const RELAY = '33333333-3333-3333-3333-333333333333';
const CONFIGMAPS: ApiResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: ['get', 'list'], subresources: [] };

const cluster = (name: string, id: string): Cluster => ({ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name }, spec: { clusterID: id } });
const CLUSTERS = [cluster('member', MEMBER), cluster('owner', OWNER)];
const ruleObject: ResourceSyncRule = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name: 'app-sink', generation: 1 }, spec: { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: ['app'] }] }] } };
const RULE = ruleState('app-sink', ruleObject.spec, ruleObject, NAMESPACE);
const FROM: PeerRef = { id: OWNER, name: 'owner', ownCluster: () => undefined };

const configMap = (data: Record<string, string>, annotations: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'app', namespace: 'app', uid: 'source-uid', resourceVersion: '5', annotations },
  data,
});

/** A managedFields set owning every field of `o`. */
function fieldsOf(o: unknown): object {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) return {};
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [`f:${k}`, fieldsOf(v)]));
}

/**
 * The copy a member's sync wrote of `source` (by default the member's, from the owner), with its
 * record and our field manager owning it all; or, written by upstream's controller, with neither
 * our records nor our manager.
 */
function written(source: KubeObject, o: { from?: PeerRef; at?: string; upstream?: boolean } = {}): KubeObject {
  const at = o.at ?? MEMBER;
  const { desired } = desiredCopy(RULE, o.from ?? FROM, source, { localClusterID: at, clusters: CLUSTERS })!;
  if (o.upstream) delete desired.metadata.annotations?.[ANNOTATIONS.source];
  else recordOn(desired, undefined, recordedFrom(RULE, source, at));
  const body = applyBody(desired, 'whole');
  const { apiVersion: _a, kind: _k, ...fields } = body;
  const manager = o.upstream ? { manager: 'cluster-registry-controller', operation: 'Update' } : { manager: FIELD_MANAGER, operation: 'Apply' };
  return { ...body, metadata: { ...body.metadata, uid: `copy-${at}`, resourceVersion: '9', managedFields: [{ ...manager, time: '2026-11-27T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: fieldsOf(fields) }] } };
}

/** A member holding `objects` (and the namespace `app` unless told otherwise), read as trace reads a peer. */
function member(objects: KubeObject[], o: { namespace?: boolean; id?: string; otherController?: boolean } = {}): MemberView {
  const all = [...objects, ...(o.namespace === false ? [] : [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'app' } }])];
  const find = (resource: string, ns: string | undefined, name: string) => all.find((x) => `${(x.kind ?? '').toLowerCase()}s` === resource && x.metadata.namespace === ns && x.metadata.name === name);
  const reader: MemberView['reader'] = {
    get: <T extends KubeObject>(ref: { resource: string }, ns: string | undefined, name: string) => {
      const found = find(ref.resource, ns, name);
      return found ? Promise.resolve(found as T) : Promise.reject(ApiError.fromStatus({}, 404, 'GET', name));
    },
    getIfExists: <T extends KubeObject>(ref: { resource: string }, ns: string | undefined, name: string) => Promise.resolve(find(ref.resource, ns, name) as T | undefined),
    list: () => Promise.reject(new Error('not listed here')),
  };
  const discovery = { resourceFor: () => Promise.resolve(CONFIGMAPS), all: () => Promise.resolve([CONFIGMAPS]) };
  return { id: o.id ?? MEMBER, reader, discovery, clusters: CLUSTERS, namespace: NAMESPACE, here: 'there', ...(o.otherController ? { otherController: true } : {}) };
}

const facts = (o: Partial<OwnershipFacts> = {}): OwnershipFacts => ({ localClusterID: MEMBER, syncedFromClusterID: OWNER, alivePeerIDs: new Set([OWNER]), recordedSourceLive: () => true, ownerRegistered: () => true, ...o });

const withMeta = (o: KubeObject, meta: Partial<KubeObject['metadata']>, data?: Record<string, string>): KubeObject => ({ ...o, metadata: { ...o.metadata, ...meta }, ...(data ? { data } : {}) });

describe('trace: a member’s copy judged from what it lets us read', () => {
  const source = configMap({ k: 'v' });
  const edit = { manager: 'kubectl-patch', operation: 'Update', time: '2026-11-27T11:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:k': {} } } };
  const reported = configMap({ k: 'v' }, { [ANNOTATIONS.driftPolicy]: 'Report' });
  const ADOPTING = ruleState('app-sink', { ...ruleObject.spec, adoptionPolicy: 'Always' }, { ...ruleObject, spec: { ...ruleObject.spec, adoptionPolicy: 'Always' } }, NAMESPACE);
  const cases: { name: string; source: KubeObject; held: KubeObject[]; facts?: Partial<OwnershipFacts>; namespace?: boolean; rule?: typeof RULE; other?: boolean; state: TraceState; reason: RegExp }[] = [
    { name: 'the copy its sync wrote from the source as it is', source, held: [written(source)], state: 'in sync', reason: /^in sync$/ },
    {
      name: 'a copy edited where it is, after the sync wrote it',
      source: reported,
      held: [withMeta(written(reported), { managedFields: [...(written(reported).metadata.managedFields ?? []), edit] }, { k: 'edited' })],
      state: 'drifted',
      reason: /^edited there, not at its source: data\.k \(changed by kubectl-patch, Update, at 2026-11-27T11:00:00Z\); Report: left as edited, and marked$/,
    },
    { name: 'a copy written from an older source', source, held: [written(configMap({ k: 'old' }))], state: 'differs', reason: /differs from what the rule makes/ },
    { name: 'no copy while the rule takes the source', source, held: [], state: 'absent', reason: /no copy there yet/ },
    { name: 'no copy while the member does not reach the source’s member', source, held: [], facts: { alivePeerIDs: new Set() }, state: 'absent', reason: /SourceUnreachable/ },
    { name: 'an object of the member’s own at the copy’s place', source, held: [configMap({ k: 'mine' })], state: 'blocked', reason: /a local object is in the way \(adoptionPolicy Never\)/ },
    { name: 'a copy its member stopped the sync of', source, held: [withMeta(written(source), { annotations: { ...written(source).metadata.annotations, [ANNOTATIONS.resourceSyncDisabled]: 'true' } })], state: 'blocked', reason: /SyncDisabledLocally/ },
    { name: 'the copy’s namespace missing there', source, held: [], namespace: false, state: 'blocked', reason: /waits for namespace app/ },
    { name: 'a source that says it is not to be copied', source: configMap({ k: 'v' }, { [ANNOTATIONS.resourceSyncDisabled]: 'true' }), held: [], state: 'no copy', reason: /SyncDisabledOnSource/ },
    { name: 'an object of the member’s own its rule takes over (adoptionPolicy Always)', source, held: [configMap({ k: 'mine' })], rule: ADOPTING, state: 'absent', reason: /takes over the local object there \(adoptionPolicy Always\)/ },
    { name: 'a copy upstream’s controller wrote, holding what ours would write', source, held: [written(source, { upstream: true })], other: true, state: 'in sync', reason: /^in sync$/ },
    { name: 'a copy upstream’s controller wrote from an older source', source, held: [written(configMap({ k: 'old' }), { upstream: true })], other: true, state: 'differs', reason: /differs from what the rule makes/ },
    { name: 'the same copy, were ours to keep it: it would take our records', source, held: [written(source, { upstream: true })], state: 'differs', reason: /differs from what the rule makes/ },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.state}`, async () => {
      const j = await judgeCopy(member(c.held, { namespace: c.namespace ?? true, otherController: c.other ?? false }), c.rule ?? RULE, FROM, facts(c.facts), c.source);
      assert.ok(j, 'the rule takes the source');
      assert.equal(stateOf(j), c.state, j.reason);
      assert.match(j.reason, c.reason);
    });
  }

  it('says who edited which field, never what it holds', async () => {
    const copy = written(reported);
    const j = await judgeCopy(member([withMeta(copy, { managedFields: [...(copy.metadata.managedFields ?? []), edit] }, { k: 'a secret value' })]), RULE, FROM, facts(), reported);
    assert.deepEqual(
      j?.update?.fields.map((f) => [f.segments.join('.'), f.manager]),
      [['data.k', 'kubectl-patch']],
    );
    assert.doesNotMatch(j?.reason ?? '', /a secret value/);
  });
});

describe('trace: a copy passed on by another member', () => {
  const source = configMap({ k: 'v' });
  const relayRef: PeerRef = { id: RELAY, name: 'relay', ownCluster: () => undefined };
  const onRelay = written(source, { at: RELAY });
  const onMember = written(onRelay, { from: relayRef });
  const seeds = new Set([JSON.stringify([OWNER, '', 'ConfigMap', 'app', 'app'])]);
  const members = new Map([[RELAY, { id: RELAY, view: member([onRelay], { id: RELAY }), signal: AbortSignal.timeout(10_000) }]]);

  it('is judged as read from the member that passed it on, where its sync reads it: in sync', async () => {
    // As read from the owner, which the member does not reach, another source delivers it.
    const direct = await judgeCopy(member([onMember]), RULE, FROM, facts({ alivePeerIDs: new Set([RELAY]) }), source);
    assert.equal(direct?.reason, 'DeliveredByAnotherSource');
    const relay = await relayOf(onMember, RULE.sourceGVK, members, seeds);
    assert.ok(relay && 'object' in relay);
    assert.equal(relay.object, onRelay, "the relay's copy");
    const j = await judgeCopy(member([onMember]), RULE, relayRef, facts({ syncedFromClusterID: RELAY, alivePeerIDs: new Set([RELAY]) }), relay.object);
    assert.equal(j && stateOf(j), 'in sync', j?.reason);
  });

  it('is not followed to a member not read, to an object that is no copy of the source, nor round a loop', async () => {
    assert.equal(await relayOf(onMember, RULE.sourceGVK, new Map(), seeds), undefined, 'the relay not read');
    assert.equal(await relayOf(onMember, RULE.sourceGVK, members, new Set(['another source'])), undefined, 'a copy of something else');
    const looped = withMeta(onRelay, { annotations: { ...onRelay.metadata.annotations, [ANNOTATIONS.source]: formatSourceIdentity({ clusterID: RELAY, group: '', kind: 'ConfigMap', namespace: 'app', name: 'app' }) } });
    assert.equal(await relayOf(onMember, RULE.sourceGVK, new Map([[RELAY, { id: RELAY, view: member([looped], { id: RELAY }), signal: AbortSignal.timeout(10_000) }]]), seeds), undefined, 'its own source');
    assert.equal(await relayOf(onMember, { group: 'apps', version: 'v1', kind: 'Deployment' }, members, seeds), undefined, 'of another kind than the rule reads');
  });

  it('says so when the member that passed it on could not be read', async () => {
    const failing = member([onRelay], { id: RELAY });
    const broken = { ...failing, reader: { ...failing.reader, getIfExists: () => Promise.reject(new Error('connection refused')) } };
    const relay = await relayOf(onMember, RULE.sourceGVK, new Map([[RELAY, { id: RELAY, view: broken, signal: AbortSignal.timeout(10_000) }]]), seeds);
    assert.ok(relay && 'unread' in relay);
    assert.match(relay.why, /connection refused/);
  });
});

describe('trace: what it says of the whole', () => {
  const row = (state: TraceState): TraceRow => ({ member: 'm', seen: 'inferred', object: '-', rule: '-', state, reason: '' });
  it('is incomplete when anything was not read or judged, else differs when a copy is not as its source says', () => {
    const cases: [TraceState[], ReturnType<typeof traceOutcome>][] = [
      [['source', 'in sync', 'no copy'], 'in sync'],
      [['source', 'drifted'], 'differs'],
      [['source', 'differs'], 'differs'],
      [['source', 'absent'], 'differs'],
      [['source', 'blocked'], 'differs'],
      [['source', 'stale'], 'differs'],
      [['source', 'drifted', 'not read'], 'incomplete'],
      [['not read', 'not judged'], 'incomplete'],
    ];
    for (const [states, outcome] of cases) assert.equal(traceOutcome({ rows: states.map(row) }), outcome, states.join(', '));
  });

  it('lists every member once, in the registry’s order, with why when it has no rows', () => {
    const c = (name: string, id: string, annotations?: Record<string, string>): Cluster => ({ ...cluster(name, id), metadata: { name, ...(annotations ? { annotations } : {}) } });
    const registry = [c('a', 'A'), c('b', 'B'), c('b-again', 'B'), c('c', 'C', { [ANNOTATIONS.clusterDisabled]: '' })];
    const byMember = new Map<string, TraceRow[]>([
      ['b', [{ ...row('source'), member: 'b' }]],
      ['gone', [{ ...row('not read'), member: 'gone' }]],
    ]);
    const rows = inRegistryOrder(registry, byMember, (m) => ({ ...row('no copy'), member: m }));
    assert.deepEqual(
      rows.map((r) => [r.member, r.state]),
      [['a', 'no copy'], ['b', 'source'], ['c', 'no copy'], ['gone', 'not read']],
      'b-again speaks for no one; the disabled member is listed (as not read, by the caller); a member without a Cluster here comes last',
    );
  });
});

describe('trace: finding the copies of a source', () => {
  const id = (clusterID: string, name: string, rule = 'r'): SourceIdentity => ({ clusterID, group: '', kind: 'ConfigMap', namespace: 'app', name, rule });
  const copy = (name: string, from: SourceIdentity): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'app', labels: { [LABELS.ownership]: OWNER }, annotations: { [ANNOTATIONS.ownership]: OWNER, [ANNOTATIONS.source]: formatSourceIdentity(from) } } });
  const key = (i: SourceIdentity) => JSON.stringify([i.clusterID, i.group, i.kind, i.namespace, i.name]);

  it('by their source annotation, through members that passed it on, whatever they are named', () => {
    const direct = copy('app-renamed', id(OWNER, 'app'));
    const relayed = copy('app-again', id('relay', 'app-renamed'));
    const unrelated = copy('other', id(OWNER, 'other'));
    const handMade = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'app', annotations: { [ANNOTATIONS.source]: 'not json' } } };
    const found = copiesOf([key(id(OWNER, 'app'))], [
      { memberID: 'third', object: relayed },
      { memberID: 'relay', object: direct },
      { memberID: 'relay', object: unrelated },
      { memberID: 'third', object: handMade },
    ]);
    assert.deepEqual(new Set(found), new Set([direct, relayed]));
  });
});

describe('trace: several rules of a member taking the source', () => {
  const copyBy = (rule: string, clusterID = OWNER): KubeObject => ({ metadata: { name: 'app', namespace: 'app', annotations: { [ANNOTATIONS.source]: formatSourceIdentity({ clusterID, group: '', kind: 'ConfigMap', namespace: 'app', name: 'app', rule }) } } });
  const seeds = new Set([JSON.stringify([OWNER, '', 'ConfigMap', 'app', 'app'])]);
  const place = 'v1/ConfigMap|app/app';

  it('say the copy once, by the rule that delivers it; a copy of another source in the way stays said', () => {
    const delivering = { rule: 'a', j: { reason: 'in sync', current: copyBy('a'), place } };
    const other = { rule: 'b', j: { reason: 'DeliveredByAnotherSource', current: copyBy('a'), place } };
    assert.deepEqual(ownJudgements([delivering, other], seeds), [delivering]);
    const foreign = { rule: 'b', j: { reason: 'DeliveredByAnotherSource', current: copyBy('a', 'elsewhere'), place } };
    assert.deepEqual(ownJudgements([delivering, foreign], seeds), [delivering, foreign]);
    const orphaned = { rule: 'b', j: { reason: 'DeliveredByAnotherSource', current: copyBy('gone'), place } };
    assert.deepEqual(ownJudgements([orphaned], seeds), [orphaned], 'the rule that made it judges it no more: said');
  });
});

describe('trace: the kind asked for', () => {
  const r = (group: string, version: string, resource: string, kind: string): ApiResource => ({ group, version, resource, kind, namespaced: true, verbs: ['get', 'list'], subresources: [] });
  const served = [{ ...r('', 'v1', 'configmaps', 'ConfigMap'), shortNames: ['cm'] }, r('', 'v1', 'events', 'Event'), r('events.k8s.io', 'v1', 'events', 'Event'), r('apps', 'v1', 'deployments', 'Deployment'), r('a.example.com', 'v1', 'widgets', 'Widget'), r('b.example.com', 'v1', 'widgets', 'Widget')];

  it('takes what kubectl takes', () => {
    const cases: [string, string][] = [
      ['configmap', 'v1/configmaps'],
      ['ConfigMap', 'v1/configmaps'],
      ['configmaps', 'v1/configmaps'],
      ['cm', 'v1/configmaps'],
      ['CM', 'v1/configmaps'],
      ['deployments.apps', 'apps/v1/deployments'],
      ['deployment.v1.apps', 'apps/v1/deployments'],
      ['event', 'v1/events'],
      ['events.events.k8s.io', 'events.k8s.io/v1/events'],
      ['widget.b.example.com', 'b.example.com/v1/widgets'],
    ];
    for (const [arg, want] of cases) {
      const got = resolveKind(served, arg);
      assert.equal(`${got.group ? `${got.group}/` : ''}${got.version}/${got.resource}`, want, arg);
    }
  });

  it('says when a kind is unknown, or in several groups', () => {
    assert.throws(() => resolveKind(served, 'gadget'), /no resource type "gadget"/);
    assert.throws(() => resolveKind(served, 'deployments.nope'), /no resource type/);
    assert.throws(() => resolveKind(served, 'widgets'), /widgets\.a\.example\.com, widgets\.b\.example\.com/);
  });
});

describe('trace: the last write', () => {
  it('is the newest entry, of one manager when asked', () => {
    const o: KubeObject = {
      metadata: {
        managedFields: [
          { manager: FIELD_MANAGER, operation: 'Apply', time: '2026-11-27T10:00:00Z' },
          { manager: 'kubectl-edit', operation: 'Update', time: '2026-11-27T12:00:00Z' },
          { manager: FIELD_MANAGER, operation: 'Apply', time: '2026-11-27T11:00:00Z' },
        ],
      },
    };
    assert.deepEqual(lastWrite(o), { manager: 'kubectl-edit', operation: 'Update', time: '2026-11-27T12:00:00Z' });
    assert.deepEqual(lastWrite(o, FIELD_MANAGER), { manager: FIELD_MANAGER, operation: 'Apply', time: '2026-11-27T11:00:00Z' });
    assert.equal(lastWrite({ metadata: {} }), undefined);
  });
});

describe('trace: a Secret source, whatever a rule does with it (review 26, finding 1)', () => {
  const SECRETS: ApiResource = { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true, verbs: ['get', 'list'], subresources: [] };
  const VALUE = 'hunter2-TOPSECRET';
  const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'app', uid: 'u', resourceVersion: '5' }, type: 'Opaque', data: { password: Buffer.from(VALUE).toString('base64') } };
  const view = (asked: string[], kinds: ApiResource[] = [SECRETS, CONFIGMAPS]): MemberView => ({
    id: MEMBER,
    reader: {
      get: () => Promise.reject(new Error('no')),
      getIfExists: <T extends KubeObject>(r: { resource: string }, ns: string | undefined, n: string) => {
        asked.push(`${r.resource} ${ns ?? ''}/${n}`);
        return Promise.resolve((r.resource === 'namespaces' ? { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } } : undefined) as T | undefined);
      },
      list: () => Promise.reject(new Error('no')),
    },
    discovery: { resourceFor: (g) => Promise.resolve(kinds.find((k) => k.kind === g.kind)!), all: () => Promise.resolve(kinds) },
    clusters: CLUSTERS,
    namespace: NAMESPACE,
    here: 'here',
  });
  const ruleOf = (kind: string, mutations: NonNullable<ResourceSyncRule['spec']['rules']>[number]['mutations']) => {
    const spec = { groupVersionKind: { version: 'v1', kind }, rules: [{ match: [{ namespaces: ['app'] }], mutations }] };
    return ruleState('hostile', spec, { ...ruleObject, metadata: { name: 'hostile', generation: 1 }, spec }, NAMESPACE);
  };
  const password = '{{ printf "%s" (index .Object.Data "password") }}';
  const leaks = (j: unknown, asked: string[]) => [JSON.stringify(j), ...asked].some((t) => t.includes(VALUE) || t.toLowerCase().includes(VALUE.toLowerCase()) || t.includes(Buffer.from(VALUE).toString('base64')));
  const cases: { name: string; kind?: string; mutations: Parameters<typeof ruleOf>[1]; state: TraceState }[] = [
    { name: 'a kind mutation to a ConfigMap', mutations: { groupVersionKind: { kind: 'ConfigMap' } }, state: 'absent' },
    { name: 'a template into an annotation', mutations: { overrides: [{ type: 'replace', path: '/metadata/annotations/x?', value: password }] }, state: 'absent' },
    { name: 'a template into the copy’s name', mutations: { overrides: [{ type: 'replace', path: '/metadata/name', value: `${password.slice(0, -3)} | lower }}` }] }, state: 'not judged' },
    { name: 'a template into a name no object can have', mutations: { overrides: [{ type: 'replace', path: '/metadata/name', value: `x/${password}` }] }, state: 'not judged' },
  ];
  for (const c of cases) {
    it(`${c.name}: nothing of its value said, nor sent; ${c.state}`, async () => {
      const asked: string[] = [];
      const j = await judgeCopy(view(asked), ruleOf('Secret', c.mutations), FROM, facts(), secret);
      assert.ok(j, 'the rule takes the source');
      assert.equal(stateOf(j), c.state, j.reason);
      assert.ok(!leaks(j, asked), `${JSON.stringify(j)} ${asked.join(', ')}`);
      if (j.action === 'create') assert.equal(j.diff, SECRET_DIFF_WITHHELD);
    });
  }

  it('a Secret copied as a Secret, by a rule with no template: its diff shows, every value hidden', async () => {
    const asked: string[] = [];
    const j = await judgeCopy(view(asked), ruleOf('Secret', undefined), FROM, facts(), secret);
    assert.equal(j?.action, 'create');
    assert.match(j.diff ?? '', /password: \(hidden\)/);
    assert.ok(!leaks(j, asked), JSON.stringify(j));
  });

  it('of any kind, asks nothing by a rendered name no request path can hold', async () => {
    const asked: string[] = [];
    const j = await judgeCopy(view(asked), ruleOf('ConfigMap', { overrides: [{ type: 'replace', path: '/metadata/name', value: '{{ printf "x/%s" .Object.Data.k }}' }] }), FROM, facts(), configMap({ k: 'v' }));
    assert.equal(j?.action, 'refused');
    assert.match(j?.reason ?? '', /\("app\/x\/v"\) is not one an object can have/);
    assert.deepEqual(asked, []);
  });

  it('on a peer, by its copy’s record and mark only: in sync, differs, drifted with its fields, never the mark’s text', () => {
    const copy = (annotations: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'app', annotations: { [ANNOTATIONS.source]: formatSourceIdentity({ clusterID: OWNER, group: '', kind: 'Secret', namespace: 'app', name: 'db', rule: 'r' }), ...annotations } } });
    const record = (v: string) => JSON.stringify({ hash: 'h', cluster: MEMBER, sourceVersion: v, ruleGeneration: 1 });
    const peer = { name: 'peer', seen: 'inferred' as const };
    assert.equal(recordRow(peer, copy({ [ANNOTATIONS.syncRecord]: record('5') }), secret).state, 'in sync');
    assert.equal(recordRow(peer, copy({ [ANNOTATIONS.syncRecord]: record('4') }), secret).state, 'differs');
    assert.equal(recordRow(peer, copy({}), secret).state, 'not judged');
    const drifted = recordRow(peer, copy({ [ANNOTATIONS.syncRecord]: record('5'), [ANNOTATIONS.drifted]: VALUE, [ANNOTATIONS.driftedFields]: JSON.stringify({ fingerprint: 'f', fields: [['data', 'password']] }) }), secret);
    assert.equal(drifted.state, 'drifted');
    assert.deepEqual(drifted.drift?.map((d) => d.field), ['data.password']);
    assert.match(drifted.reason, /rules were not run over a Secret/);
    assert.ok(!JSON.stringify(drifted).includes(VALUE));
  });
});

describe('trace: a peer’s malformed objects (review 26, finding 2)', () => {
  it('are not taken as objects, and a malformed write history is passed over', () => {
    for (const mf of [{}, 'x', [null], [{ time: 5 }, { time: 'a', manager: 'm' }]]) {
      assert.doesNotThrow(() => lastWrite({ metadata: { managedFields: mf as never } }), JSON.stringify(mf));
    }
    assert.deepEqual(lastWrite({ metadata: { managedFields: [null, { time: 'a', manager: 'x'.repeat(10_000) }] as never } })?.manager.length, 128);
    const ok: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'app', annotations: { a: 'b' } } };
    assert.ok(wellFormed(ok));
    for (const bad of [null, 5, { ...ok, apiVersion: 5 }, { ...ok, metadata: null }, { ...ok, metadata: { ...ok.metadata, annotations: { a: 1 } } }, { ...ok, metadata: { ...ok.metadata, managedFields: {} } }, { ...ok, metadata: { ...ok.metadata, name: {} } }]) {
      assert.equal(wellFormed(bad), false, JSON.stringify(bad));
    }
  });

  it('registries: entries a registry cannot hold are left out', () => {
    const c = cluster('a', 'A');
    assert.ok(clusterShaped(c));
    for (const bad of [null, { ...c, spec: 'x' }, { ...c, status: { conditions: {} } }, { ...c, status: { conditions: [null] } }, { ...c, spec: { clusterID: 5 } }]) assert.equal(clusterShaped(bad), false, JSON.stringify(bad));
  });
});
