// A sync engine seen through its seam, for unit tests: the view the reconciler, the router and the
// collector read (rules, bindings, the alive peers, the registry), bindings over plain maps of
// source objects, local copies in a map, and a writer that records what it was asked to write.
import { ANNOTATIONS, formatSourceIdentity, gvkOf, sourceIdentityOf, sourceObjectKey, type SourceIdentity } from '../../src/core/api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRule, ResourceSyncRuleSpec } from '../../src/core/api/types.ts';
import { markAnnotations, ruleState, type DriftMark, type RuleState } from '../../src/core/rules/index.ts';
import type { TrustFacts } from '../../src/core/trust/index.ts';
import { ApiError, chargedSize, GcraRateLimiter, SliceDriver, type CacheLimits, type Renders, type Steps } from '../../src/kube/index.ts';
import { CopyBudget } from '../../src/sync/copy-budget.ts';
import { syncKey, type SyncKey } from '../../src/sync/keys.ts';
import type { DeleteOutcome } from '../../src/sync/writer.ts';
import type { BoundPeer, CopiesView, CopyWrites, PeerName, SyncView } from '../../src/sync/view.ts';

export const LOCAL_ID = 'local-uid';
export const NAMESPACE = 'cluster-registry';

/** A rule syncing ConfigMaps (rules: its ResourceSyncRule's rules). */
export function configMapRule(name: string, rules: ResourceSyncRuleSpec['rules'] = [{}]): RuleState {
  const spec: ResourceSyncRuleSpec = { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules };
  const object: ResourceSyncRule = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name, uid: `rule-${name}` }, spec };
  return ruleState(name, spec, object, NAMESPACE);
}

/**
 * A ConfigMap rule whose copies take three templates of some 800,000 steps each: tens of
 * milliseconds apiece, each past a slice of the event loop. The copy stays where its source is.
 */
export function heavyTemplatesRule(name: string): RuleState {
  const heavy = '{{ range until 550 }}{{ range until 550 }}{{ end }}{{ end }}x';
  return configMapRule(name, [{ mutations: { overrides: ['a', 'b', 'c'].map((k) => ({ type: 'replace', path: `/data/${k}?`, value: heavy })) } }]);
}

/** The local registry's Cluster of a member. */
export function member(p: PeerName): Cluster {
  return { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: p.name }, spec: { clusterID: p.id } };
}

/** A ConfigMap `ns/name`, owned by `owner` (none when empty), recording `source` when given (a copy). */
export function configMap(name: string, o: { owner?: string; source?: SourceIdentity; uid?: string; rv?: string; labels?: Record<string, string> } = {}): KubeObject {
  const annotations: Record<string, string> = {};
  if (o.owner) annotations[ANNOTATIONS.ownership] = o.owner;
  if (o.source) annotations[ANNOTATIONS.source] = formatSourceIdentity(o.source);
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', uid: o.uid ?? `uid-${name}`, resourceVersion: o.rv ?? '1', annotations, ...(o.labels ? { labels: o.labels } : {}) }, data: { k: 'v' } };
}

export function peer(name: string, id = `${name}-uid`): PeerName {
  return { name, id };
}

/** A binding of `rule` to `p` over `sources` (keyed `ns/name`), listed and readable unless told. */
export function binding(rule: RuleState, p: PeerName, sources: KubeObject[] = [], o: { synced?: boolean; reaches?: (id: string) => boolean; leftOut?: readonly string[]; hidden?: readonly string[]; bytes?: number } = {}): BoundPeer & { sources: Map<string, KubeObject> } {
  const map = new Map(sources.map((s) => [`${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`, s]));
  return {
    rule,
    peer: p,
    peerRef: { id: p.id, name: p.name, ownCluster: () => undefined },
    phase: 'active',
    readable: true,
    synced: o.synced ?? true,
    limiter: new GcraRateLimiter({ ratePerSecond: 1000, burst: 1000, maxKeys: 1000 }),
    lookup: (ns, name) => {
      const object = map.get(`${ns}/${name}`);
      // `bytes`: what its cache says each object was charged (its size as JSON unless told).
      return { inScope: true, object, bytes: () => (object ? (o.bytes ?? chargedSize(object)) : 0) };
    },
    get: (ns, name) => map.get(`${ns}/${name}`),
    list: () => [...map.values()],
    reaches: o.reaches ?? ((id) => id === p.id),
    watchesOwner: (owner) => !(o.leftOut ?? []).includes(owner),
    // `hidden`: `ns/name` of objects the peer holds that its watches do not show.
    goneFromPeer: (ns, name) => Promise.resolve(!(o.hidden ?? []).includes(`${ns}/${name}`)),
    sources: map,
  };
}

/** Renders on a driver of their own, noting what each computation says it holds. */
export class RecordingRenders implements Renders {
  readonly said: number[] = [];
  private readonly driver = new SliceDriver();

  run<T>(steps: Steps<T>, signal?: AbortSignal): Promise<T> {
    return this.driver.run(this.noting(steps), signal);
  }

  private *noting<T>(steps: Steps<T>): Steps<T> {
    try {
      for (;;) {
        const r = steps.next();
        if (r.done) return r.value;
        if (typeof r.value === 'number') this.said.push(r.value);
        yield r.value;
      }
    } finally {
      steps.return(undefined as T);
    }
  }
}

/** The engine's view over plain collections, changed by the test as it goes. */
export class FakeView implements SyncView {
  readonly localClusterID = LOCAL_ID;
  readonly rules = new Map<string, RuleState>();
  readonly bindings: BoundPeer[] = [];
  alive = new Set<string>();
  registry: Cluster[] = [];
  readonly namespaces = new Set(['ns']);

  rule(name: string): RuleState | undefined {
    return this.rules.get(name);
  }
  allRules(): RuleState[] {
    return [...this.rules.values()];
  }
  binding(rule: string, peerName: string): BoundPeer | undefined {
    return this.bindings.find((b) => b.rule.name === rule && b.peer.name === peerName);
  }
  bindingsOf(rule: string): BoundPeer[] {
    return this.bindings.filter((b) => b.rule.name === rule);
  }
  *recordedSourceLive(id: SourceIdentity): Steps<boolean> {
    // As the engine's may: a pause before the answer.
    yield;
    return this.alive.has(id.clusterID) && this.bindings.some((b) => b.peer.id === id.clusterID && b.get(id.namespace, id.name) !== undefined);
  }
  aliveIDs(): ReadonlySet<string> {
    return this.alive;
  }
  clusters(): readonly Cluster[] {
    return this.registry;
  }
  namespaceExists(name: string): boolean {
    return this.namespaces.has(name);
  }
  trust(): TrustFacts {
    return { localClusterID: LOCAL_ID, namespace: NAMESPACE, clusters: this.registry, reserved: [], closedNamespaces: [], credentialsTarget: () => undefined };
  }
  listed(): boolean {
    return true;
  }
  /** Adds the rule and its bindings. */
  bind(...bs: BoundPeer[]): this {
    for (const b of bs) {
      this.rules.set(b.rule.name, b.rule);
      this.bindings.push(b);
    }
    return this;
  }
}

const placeOf = (o: KubeObject): string => `${gvkOf(o).kind}|${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** The local copies in a map, with a real budget. */
export class FakeCopies implements CopiesView {
  readonly objects = new Map<string, KubeObject>();
  readonly budget: CopyBudget;

  constructor(perPeer: CacheLimits = { maxObjects: 1000, maxBytes: 2 ** 30 }, freed: (rule: string, peer: string) => void = () => undefined) {
    this.budget = new CopyBudget(perPeer, freed);
  }
  put(o: KubeObject): void {
    this.objects.set(placeOf(o), o);
    this.budget.observe(o, false);
  }
  remove(o: KubeObject): void {
    this.objects.delete(placeOf(o));
    this.budget.observe(o, true);
  }
  get(gvk: { kind: string }, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(`${gvk.kind}|${namespace ?? ''}/${name}`);
  }
  all(gvk: { kind: string }): KubeObject[] {
    return [...this.objects.values()].filter((o) => gvkOf(o).kind === gvk.kind);
  }
  legacy(): KubeObject[] {
    return [];
  }
  bySource(gvk: { kind: string }, key: string): KubeObject[] {
    return this.all(gvk).filter((o) => {
      const id = sourceIdentityOf(o);
      return id !== undefined && sourceObjectKey(id) === key;
    });
  }
  kinds(): ReturnType<CopiesView['kinds']> {
    return this.objects.size > 0 ? [{ group: '', version: 'v1', kind: 'ConfigMap' }] : [];
  }
  synced(): boolean {
    return true;
  }
  listing(): boolean {
    return false;
  }
}

/** The requests of a FakeWriter a test can script (`status`: the write of the status subresource). */
export type WriterVerb = 'get' | 'create' | 'update' | 'mark' | 'status' | 'delete';

/** A request held open (see FakeWriter.holdNext): `reached` once it is made; it goes on, or fails, when the test says. */
export interface HeldRequest {
  readonly reached: Promise<void>;
  release(): void;
  fail(err: Error): void;
}

/**
 * A writer that writes into FakeCopies and records each request; `echoes` are the versions it will
 * call its own. Unless scripted, every request succeeds at once; `failNext` and `holdNext` script
 * the next request of a verb, `answerNextDelete` what the next delete finds.
 */
export class FakeWriter implements CopyWrites {
  readonly requests: string[] = [];
  readonly echoes = new Set<string>();
  /** What `forgetEcho` was told of, as `uid@resourceVersion`. */
  readonly forgotten: string[] = [];
  /** Objects here that are not copies (the copies' cache does not show them): `get` finds them too. */
  readonly others = new Map<string, KubeObject>();
  /** Writes do not show in the copies' cache (their watch events are late) until the test puts them there. */
  cacheBehind = false;
  private version = 100;
  private readonly copies: FakeCopies;
  private readonly scripted = new Map<WriterVerb, (() => Promise<void>)[]>();
  private readonly deleteAnswers: DeleteOutcome[] = [];

  constructor(copies: FakeCopies) {
    this.copies = copies;
  }
  get(_r: unknown, namespace: string | undefined, name: string): Promise<KubeObject> {
    return this.carryOut('get', () => {
      const o = this.copies.get({ kind: 'ConfigMap' }, namespace, name) ?? this.others.get(`${namespace ?? ''}/${name}`);
      if (!o) throw new ApiError({ code: 404, method: 'GET', path: `/api/v1/namespaces/${namespace ?? ''}/configmaps/${name}` });
      return o;
    });
  }
  create(_r: unknown, desired: KubeObject): Promise<KubeObject> {
    return this.request('create', desired, () => this.written(desired));
  }
  update(_r: unknown, desired: KubeObject): Promise<KubeObject> {
    return this.request('update', desired, () => this.written(desired));
  }
  mark(_r: unknown, desired: KubeObject, current: KubeObject, mark: Required<DriftMark> | 'clear'): Promise<KubeObject> {
    return this.request('mark', desired, () => {
      const annotations = { ...current.metadata.annotations };
      delete annotations[ANNOTATIONS.drifted];
      delete annotations[ANNOTATIONS.driftedFields];
      if (mark !== 'clear') Object.assign(annotations, markAnnotations(mark));
      return this.written({ ...current, metadata: { ...current.metadata, annotations } });
    });
  }
  applyStatus(_r: unknown, desired: KubeObject): Promise<KubeObject> {
    return this.request('status', desired, () => desired);
  }
  delete(_r: unknown, copy: KubeObject): Promise<DeleteOutcome> {
    const answer = this.deleteAnswers.shift();
    return this.request('delete', copy, () => {
      if (answer !== undefined) return answer;
      this.copies.remove(copy);
      return 'deleted';
    });
  }
  consumeEcho(copy: KubeObject): boolean {
    return this.echoes.delete(copy.metadata.resourceVersion ?? '');
  }
  forgetEcho(copy: KubeObject): void {
    this.forgotten.push(`${copy.metadata.uid ?? ''}@${copy.metadata.resourceVersion ?? ''}`);
  }

  /** The next request of `verb` fails with `err` (an ApiError, say) and changes nothing. */
  failNext(verb: WriterVerb, err: Error): void {
    this.script(verb, () => Promise.reject(err));
  }

  /** The next request of `verb` stays open until the test releases it (then carried out) or fails it. */
  holdNext(verb: WriterVerb): HeldRequest {
    const reached = Promise.withResolvers<void>();
    const settled = Promise.withResolvers<void>();
    this.script(verb, () => {
      reached.resolve();
      return settled.promise;
    });
    return { reached: reached.promise, release: () => settled.resolve(), fail: (err) => settled.reject(err) };
  }

  /** The next delete finds `outcome` (the copy changed, gone, or a namespace kept) and removes nothing. */
  answerNextDelete(outcome: DeleteOutcome): void {
    this.deleteAnswers.push(outcome);
  }

  private script(verb: WriterVerb, step: () => Promise<void>): void {
    const steps = this.scripted.get(verb) ?? [];
    steps.push(step);
    this.scripted.set(verb, steps);
  }

  /** Records the request, then carries it out. */
  private request<T>(verb: Exclude<WriterVerb, 'get'>, o: KubeObject, write: () => T): Promise<T> {
    this.requests.push(`${verb} ${placeOf(o)}`);
    return this.carryOut(verb, write);
  }

  /** Carries `write` out at once (before returning), or after the step scripted for `verb`, which may fail it instead. */
  private async carryOut<T>(verb: WriterVerb, write: () => T): Promise<T> {
    const step = this.scripted.get(verb)?.shift();
    if (step) await step();
    return write();
  }

  private written(desired: KubeObject): KubeObject {
    const made = { ...desired, metadata: { ...desired.metadata, uid: desired.metadata.uid ?? `made-${desired.metadata.name ?? ''}`, resourceVersion: String(++this.version) } };
    if (!this.cacheBehind) this.copies.put(made);
    return made;
  }
}

/** The key of `name` in namespace ns as `rule` on `peer` sees it. */
export function keyOf(rule: RuleState, p: PeerName, name: string): SyncKey {
  return syncKey(rule.name, p.name, 'ns', name);
}
