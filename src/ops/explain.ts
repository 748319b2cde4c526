// `explain`: what a ResourceSyncRule would do on one cluster, decided as the controller decides
// (the same matching, mutation, ownership and copy-policy code), without writing anything. It
// reads the local registry, connects to each peer with the credentials the controller uses (read
// the same way: peer mode, the peer proving its kube-system UID), lists the rule's objects there,
// and compares the copies they would make with what this cluster holds.
import { CLUSTER_FEATURES, CLUSTERS, LABELS, sourceIdentityOf, type FullGVK, type SourceIdentity } from '../core/api/index.ts';
import type { Cluster, ClusterFeature, KubeObject, ResourceSyncRule } from '../core/api/types.ts';
import { registryReaches } from '../core/registry/index.ts';
import { advertisedFeature, copyPlace, decideDelete, errorMessage, featuresSatisfied, formatIssue, ruleState, sourceScope, type OwnershipFacts, type RuleState } from '../core/rules/index.ts';
import { Discovery, NoKindMatchError, type ApiResource, type ObjectReader } from '../kube/index.ts';
import { kubeSystemUID } from '../peers/identity.ts';
import { judgeCopy, objectLabel, objectName, type CopyAction, type MemberView } from './copy-judge.ts';
import { call, connectPeers, type ReadPeer } from './peer-access.ts';

export type ExplainAction = CopyAction;

export interface ExplainRow {
  /** The peer the source comes from. */
  readonly peer: string;
  /** `namespace/name` of the source on the peer. */
  readonly source: string;
  /** `Kind namespace/name` of the copy here. */
  readonly copy: string;
  readonly action: ExplainAction;
  readonly reason: string;
  /** The copy as it would be written (create), or what would change in it (update). */
  readonly diff?: string;
}

export interface Explanation {
  /** The local Cluster's name. */
  readonly cluster: string;
  readonly rows: ExplainRow[];
  /** Peers the rule reads nothing from, and why. */
  readonly skipped: { readonly peer: string; readonly why: string }[];
}

export interface ExplainOptions {
  /** This cluster's network, which picks the peers' endpoints. */
  readonly network: string;
  /** The controller namespace: where credentials are read, and what the trust boundary keeps. */
  readonly namespace: string;
  readonly signal?: AbortSignal;
}

export class Explainer {
  private readonly local: ObjectReader;
  private readonly o: ExplainOptions;
  private readonly discovery: Discovery;

  constructor(local: ObjectReader, opts: ExplainOptions) {
    this.local = local;
    this.o = opts;
    this.discovery = new Discovery(local);
  }

  async explain(object: ResourceSyncRule): Promise<Explanation> {
    const rule = ruleState(object.metadata.name ?? 'explained', object.spec ?? {}, object, this.o.namespace);
    if (!rule.compiled) throw new Error(`the rule is invalid: ${rule.issues.map(formatIssue).join('; ')}`);
    const localID = await kubeSystemUID(this.local, this.o.signal);
    const clusters = (await this.local.list<Cluster>(CLUSTERS, call(this.o.signal))).items;
    const cluster = clusters.find((c) => c.spec?.clusterID === localID)?.metadata.name ?? '(no local Cluster)';
    const { peers, skipped } = await connectPeers(this.local, clusters, localID, { ...this.o, userAgent: 'cluster-registry/explain' });
    try {
      const alive = new Set(peers.map((p) => p.ref.id));
      const registered = new Set(clusters.map((c) => c.spec?.clusterID ?? ''));
      const view: MemberView = { id: localID, reader: this.local, discovery: this.discovery, clusters, namespace: this.o.namespace, here: 'here', ...call(this.o.signal) };
      const rows: ExplainRow[] = [];
      for (const p of peers) {
        const facts: OwnershipFacts = {
          localClusterID: localID,
          syncedFromClusterID: p.ref.id,
          alivePeerIDs: alive,
          recordedSourceLive: () => true,
          // As the controller judges it, lately and first-hand; explain knows of no loss of ours.
          peerReaches: (id) => id === p.ref.id || registryReaches(p.clusters, id, -Infinity, Date.now()),
          ownerRegistered: (id) => registered.has(id),
        };
        try {
          rows.push(...(await this.fromPeer(rule, p, facts, view)));
        } catch (err) {
          skipped.push({ peer: p.ref.name, why: errorMessage(err) });
        }
      }
      return { cluster, rows, skipped };
    } finally {
      for (const p of peers) p.rest.close();
    }
  }

  private async fromPeer(rule: RuleState, p: ReadPeer, facts: OwnershipFacts, view: MemberView): Promise<ExplainRow[]> {
    if (!rule.ignoresFeatures) {
      const features = (await p.rest.list<ClusterFeature>(CLUSTER_FEATURES, call(this.o.signal))).items.map(advertisedFeature);
      if (!featuresSatisfied(rule.spec.clusterFeatureMatch, features)) throw new Error('it does not advertise the ClusterFeatures clusterFeatureMatch asks for');
    }
    const resource = await new Discovery(p.rest).resourceFor(rule.sourceGVK);
    const scope = sourceScope(rule.spec, resource.namespaced);
    const sources: KubeObject[] = [];
    for (const ns of scope.namespaces ?? [undefined]) {
      const list = await p.rest.list(resource, { ...call(this.o.signal), ...(ns ? { namespace: ns } : {}), ...(scope.fieldSelector ? { fieldSelector: scope.fieldSelector } : {}) });
      sources.push(...list.items);
    }
    const rows: ExplainRow[] = [];
    const places = new Set<string>();
    const undecided = new Set<string>();
    // A source on its way out counts as gone, as for the controller.
    const live = sources.filter((s) => !s.metadata.deletionTimestamp);
    for (const source of live) {
      const j = await judgeCopy(view, rule, p.ref, facts, source);
      if (!j) continue;
      if (j.unplaceable) undecided.add(objectName(source));
      if (j.place) places.add(j.place);
      rows.push({ peer: p.ref.name, source: objectName(source), copy: j.copy, action: j.action, reason: j.reason, ...(j.diff ? { diff: j.diff } : {}) });
    }
    rows.push(...(await this.deletions(rule, p, facts, live, places, undecided)));
    return rows;
  }

  /** Copies this rule made from the peer whose source is gone or goes elsewhere now. */
  private async deletions(rule: RuleState, p: ReadPeer, facts: OwnershipFacts, sources: readonly KubeObject[], places: ReadonlySet<string>, undecided: ReadonlySet<string>): Promise<ExplainRow[]> {
    const present = new Set(sources.map(objectName));
    const rows: ExplainRow[] = [];
    for (const gvk of rule.targetGVKs) {
      for (const copy of await this.copiesOf(gvk)) {
        const id: SourceIdentity | undefined = sourceIdentityOf(copy);
        if (!id || id.clusterID !== p.ref.id || (id.rule ?? rule.name) !== rule.name || places.has(copyPlace(copy))) continue;
        const source = `${id.namespace ? `${id.namespace}/` : ''}${id.name}`;
        if (undecided.has(source)) continue;
        if (present.has(source)) {
          rows.push({ peer: p.ref.name, source, copy: objectLabel(copy), action: 'delete', reason: 'the rule no longer makes this copy: collected after the grace period' });
          continue;
        }
        const d = decideDelete(facts, id, copy);
        rows.push({ peer: p.ref.name, source, copy: objectLabel(copy), action: d.action === 'delete' ? 'delete' : 'none', reason: d.action === 'delete' ? 'its source is gone' : d.reason });
      }
    }
    return rows;
  }

  /** The copies of a kind here (every copy carries the ownership label); none when the kind is not served. */
  private async copiesOf(gvk: FullGVK): Promise<KubeObject[]> {
    let resource: ApiResource;
    try {
      resource = await this.discovery.resourceFor(gvk);
    } catch (err) {
      if (err instanceof NoKindMatchError) return [];
      throw err;
    }
    return (await this.local.list(resource, { ...call(this.o.signal), labelSelector: LABELS.ownership })).items;
  }
}
