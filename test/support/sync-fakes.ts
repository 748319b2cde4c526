// A sync engine seen through its seam, for unit tests: the view the reconciler, the router and the
// collector read (rules, bindings, the alive peers, the registry), bindings over plain maps of
// source objects, local copies in a map, and a writer that records what it was asked to write.
import { ANNOTATIONS, formatSourceIdentity, gvkOf, sourceIdentityOf, sourceObjectKey, type SourceIdentity } from '../../src/core/api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRule, ResourceSyncRuleSpec } from '../../src/core/api/types.ts';
import { ruleState, type RuleState } from '../../src/core/rules/index.ts';
import type { TrustFacts } from '../../src/core/trust/index.ts';
import { ApiError, GcraRateLimiter, type CacheLimits } from '../../src/kube/index.ts';
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
export function binding(rule: RuleState, p: PeerName, sources: KubeObject[] = [], o: { synced?: boolean; reaches?: (id: string) => boolean } = {}): BoundPeer & { sources: Map<string, KubeObject> } {
  const map = new Map(sources.map((s) => [`${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`, s]));
  return {
    rule,
    peer: p,
    peerRef: { id: p.id, name: p.name, ownCluster: () => undefined },
    phase: 'active',
    readable: true,
    synced: o.synced ?? true,
    limiter: new GcraRateLimiter({ ratePerSecond: 1000, burst: 1000, maxKeys: 1000 }),
    lookup: (ns, name) => ({ inScope: true, object: map.get(`${ns}/${name}`) }),
    get: (ns, name) => map.get(`${ns}/${name}`),
    list: () => [...map.values()],
    reaches: o.reaches ?? ((id) => id === p.id),
    sources: map,
  };
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
  recordedSourceLive(id: SourceIdentity): boolean {
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
}

/** A writer that writes into FakeCopies and records each request; `echoes` are the versions it will call its own. */
export class FakeWriter implements CopyWrites {
  readonly requests: string[] = [];
  readonly echoes = new Set<string>();
  private version = 100;
  private readonly copies: FakeCopies;

  constructor(copies: FakeCopies) {
    this.copies = copies;
  }
  get(_r: unknown, namespace: string | undefined, name: string): Promise<KubeObject> {
    const o = this.copies.get({ kind: 'ConfigMap' }, namespace, name);
    return o ? Promise.resolve(o) : Promise.reject(new ApiError({ code: 404, method: 'GET', path: `/api/v1/namespaces/${namespace ?? ''}/configmaps/${name}` }));
  }
  create(_r: unknown, desired: KubeObject): Promise<KubeObject> {
    return Promise.resolve(this.written('create', desired));
  }
  update(_r: unknown, desired: KubeObject): Promise<KubeObject> {
    return Promise.resolve(this.written('update', desired));
  }
  applyStatus(_r: unknown, desired: KubeObject): Promise<KubeObject> {
    this.requests.push(`status ${placeOf(desired)}`);
    return Promise.resolve(desired);
  }
  delete(_r: unknown, copy: KubeObject): Promise<DeleteOutcome> {
    this.requests.push(`delete ${placeOf(copy)}`);
    this.copies.remove(copy);
    return Promise.resolve('deleted');
  }
  consumeEcho(copy: KubeObject): boolean {
    return this.echoes.delete(copy.metadata.resourceVersion ?? '');
  }
  forgetEcho(): void {}

  private written(verb: string, desired: KubeObject): KubeObject {
    this.requests.push(`${verb} ${placeOf(desired)}`);
    const made = { ...desired, metadata: { ...desired.metadata, uid: desired.metadata.uid ?? `made-${desired.metadata.name ?? ''}`, resourceVersion: String(++this.version) } };
    this.copies.put(made);
    return made;
  }
}

/** The key of `name` in namespace ns as `rule` on `peer` sees it. */
export function keyOf(rule: RuleState, p: PeerName, name: string): SyncKey {
  return syncKey(rule.name, p.name, 'ns', name);
}
