// `explain`: what a ResourceSyncRule would do on one cluster, decided as the controller decides
// (the same matching, mutation, ownership and copy-policy code), without writing anything. It
// reads the local registry, connects to each peer with the credentials the controller uses (read
// the same way: peer mode, the peer proving its kube-system UID), lists the rule's objects there,
// and compares the copies they would make with what this cluster holds.
import { stringify } from 'yaml';
import { CLUSTER_FEATURES, CLUSTER_SECRET, CLUSTERS, LABELS, NAMESPACES, SECRETS, gvkOf, isDisabled, isSecret, secretText, sourceIdentityOf, type FullGVK, type Secret, type SourceIdentity } from '../core/api/index.ts';
import type { Cluster, ClusterFeature, KubeObject, ResourceSyncRule } from '../core/api/types.ts';
import { lineDiff } from '../core/diff/line-diff.ts';
import { pickEndpoint, registryReaches } from '../core/registry/index.ts';
import {
  adoptionChoices,
  adoptionPolicyOf,
  advertisedFeature,
  applyBody,
  applyNeeded,
  copyPlace,
  decideCopy,
  decideDelete,
  DECISION_REASONS,
  describeDrift,
  describeMutationFailure,
  driftOutcome,
  desiredCopy,
  errorMessage,
  FIELD_MANAGER,
  featuresSatisfied,
  formatIssue,
  planCopyUpdate,
  replacedFields,
  RuleError,
  ruleState,
  sourceScope,
  specPart,
  type OwnershipFacts,
  type PeerRef,
  type RuleState,
} from '../core/rules/index.ts';
import { hubCredentialsNamespace } from '../core/hub/index.ts';
import { credentialsRef, mayHold, speakerFor, type TrustFacts } from '../core/trust/index.ts';
import { Discovery, NoKindMatchError, RestClient, type ApiResource, type ObjectReader, type PeerReader } from '../kube/index.ts';
import { credentialsTarget, PEER_CLIENT_LIMITS, peerClusterConfig } from '../peers/connection.ts';
import { kubeSystemUID } from '../peers/identity.ts';

export type ExplainAction = 'create' | 'update' | 'delete' | 'none' | 'refused' | 'failed';

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

interface Peer {
  readonly ref: PeerRef;
  readonly rest: PeerReader;
  readonly clusters: readonly Cluster[];
}

const name = (o: KubeObject): string => `${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name ?? ''}`;
const copyLabel = (o: KubeObject): string => `${o.kind ?? ''} ${name(o)}`;

type Valued = KubeObject & { data?: Record<string, string>; stringData?: Record<string, string> };

/**
 * A Secret's values hidden, as `kubectl diff` hides them: the diff says which keys the write
 * changes (marked on the new side), never what any of them holds.
 */
function masked(before: unknown, after: KubeObject): [unknown, KubeObject] {
  if (!isSecret(after)) return [before, after];
  const b = before as Valued | undefined;
  const a = after as Valued;
  const mask = (mine: Record<string, string> | undefined, other: Record<string, string> | undefined, mark: boolean) =>
    mine && Object.fromEntries(Object.keys(mine).map((k) => [k, mark && other?.[k] !== mine[k] ? '(hidden, changed)' : '(hidden)']));
  const hide = (o: Valued, other: Valued | undefined, mark: boolean): Valued => ({ ...o, ...(o.data ? { data: mask(o.data, other?.data, mark) } : {}), ...(o.stringData ? { stringData: mask(o.stringData, other?.stringData, mark) } : {}) });
  return [b && typeof b === 'object' ? hide(b, undefined, false) : b, hide(a, b, b !== undefined)];
}

/** What writing `body` over `current` would change, as a line diff (Secret values hidden); undefined when nothing shows. */
function diffOf(current: KubeObject, body: KubeObject): string | undefined {
  const [was, will] = masked(projected(current, body), body);
  return lineDiff(stringify(was).trimEnd(), stringify(will).trimEnd()) || undefined;
}

/** The fields of `current` the desired copy sets, so the diff shows what the write changes and not what others added. */
function projected(current: unknown, desired: unknown): unknown {
  if (!current || !desired || typeof current !== 'object' || typeof desired !== 'object' || Array.isArray(desired)) return current;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(desired)) if (key in current) out[key] = projected((current as Record<string, unknown>)[key], (desired as Record<string, unknown>)[key]);
  return out;
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
    const clusters = (await this.local.list<Cluster>(CLUSTERS, this.call())).items;
    const cluster = clusters.find((c) => c.spec?.clusterID === localID)?.metadata.name ?? '(no local Cluster)';
    const skipped: { peer: string; why: string }[] = [];
    const peers: Peer[] = [];
    try {
      for (const c of clusters) {
        const peerName = c.metadata.name ?? '';
        const id = c.spec?.clusterID ?? '';
        if (id === localID) continue;
        if (isDisabled(c)) {
          skipped.push({ peer: peerName, why: 'its Cluster is disabled' });
          continue;
        }
        // Of several Clusters naming one peer, one speaks for it, as in the controller.
        if (speakerFor(clusters, id) !== c) continue;
        try {
          peers.push(await this.connect(c));
        } catch (err) {
          skipped.push({ peer: peerName, why: errorMessage(err) });
        }
      }
      const alive = new Set(peers.map((p) => p.ref.id));
      const registered = new Set(clusters.map((c) => c.spec?.clusterID ?? ''));
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
          rows.push(...(await this.fromPeer(rule, p, facts, clusters)));
        } catch (err) {
          skipped.push({ peer: p.ref.name, why: errorMessage(err) });
        }
      }
      return { cluster, rows, skipped };
    } finally {
      for (const p of peers) p.rest.close();
    }
  }

  private call(): { signal?: AbortSignal } {
    return this.o.signal ? { signal: this.o.signal } : {};
  }

  /** A read-only client to the peer, with the credentials and checks the controller uses. */
  private async connect(c: Cluster): Promise<Peer> {
    const ref = credentialsRef(c, this.o.namespace);
    if ('problem' in ref) throw new Error(ref.problem);
    // Only a registry credentials Secret of the controller namespace, as the controller reads it:
    // a peer's entry may name any Secret, and its token must not go to a server that peer chooses.
    const secret = await this.local.get<Secret>(SECRETS, ref.namespace, ref.name, this.call());
    if (secret.type !== CLUSTER_SECRET.type) throw new Error(`Secret ${ref.namespace}/${ref.name} is not of type ${CLUSTER_SECRET.type}`);
    const kubeconfig = secretText(secret, CLUSTER_SECRET.kubeconfigKey);
    if (!kubeconfig) throw new Error(`Secret ${ref.namespace}/${ref.name} has no ${CLUSTER_SECRET.kubeconfigKey} key`);
    const config = peerClusterConfig({ name: c.metadata.name ?? '', expectedID: c.spec?.clusterID ?? '', secretID: `${ref.namespace}/${ref.name}`, kubeconfig, endpoint: pickEndpoint(c, this.o.network) });
    const rest: PeerReader = new RestClient(await config.connection(), { ...PEER_CLIENT_LIMITS, userAgent: 'cluster-registry/explain', peer: c.metadata.name ?? '' });
    try {
      const id = await kubeSystemUID(rest, this.o.signal);
      if (id !== c.spec?.clusterID) throw new Error(`it is not the cluster its Cluster names (kube-system UID ${id})`);
      const clusters = (await rest.list<Cluster>(CLUSTERS, this.call())).items;
      return { ref: { id, name: c.metadata.name ?? '', ownCluster: () => clusters.find((x) => x.metadata.name === c.metadata.name) }, rest, clusters };
    } catch (err) {
      rest.close();
      throw err;
    }
  }

  private async fromPeer(rule: RuleState, p: Peer, facts: OwnershipFacts, clusters: readonly Cluster[]): Promise<ExplainRow[]> {
    if (!rule.ignoresFeatures) {
      const features = (await p.rest.list<ClusterFeature>(CLUSTER_FEATURES, this.call())).items.map(advertisedFeature);
      if (!featuresSatisfied(rule.spec.clusterFeatureMatch, features)) throw new Error('it does not advertise the ClusterFeatures clusterFeatureMatch asks for');
    }
    const resource = await new Discovery(p.rest).resourceFor(rule.sourceGVK);
    const scope = sourceScope(rule.spec, resource.namespaced);
    const sources: KubeObject[] = [];
    for (const ns of scope.namespaces ?? [undefined]) {
      const list = await p.rest.list(resource, { ...this.call(), ...(ns ? { namespace: ns } : {}), ...(scope.fieldSelector ? { fieldSelector: scope.fieldSelector } : {}) });
      sources.push(...list.items);
    }
    const rows: ExplainRow[] = [];
    const places = new Set<string>();
    const undecided = new Set<string>();
    // A source on its way out counts as gone, as for the controller.
    const live = sources.filter((s) => !s.metadata.deletionTimestamp);
    for (const source of live) {
      const row = await this.decide(rule, p, facts, clusters, source, places, undecided);
      if (row) rows.push(row);
    }
    rows.push(...(await this.deletions(rule, p, facts, live, places, undecided)));
    return rows;
  }

  /** The row of one source, or undefined when the rule does not take it. */
  private async decide(rule: RuleState, p: Peer, facts: OwnershipFacts, clusters: readonly Cluster[], source: KubeObject, places: Set<string>, undecided: Set<string>): Promise<ExplainRow | undefined> {
    const row = (copy: string, action: ExplainAction, reason: string, diff?: string): ExplainRow => ({ peer: p.ref.name, source: name(source), copy, action, reason, ...(diff ? { diff } : {}) });
    let made;
    try {
      made = desiredCopy(rule, p.ref, source, { localClusterID: facts.localClusterID, clusters });
    } catch (err) {
      if (!(err instanceof RuleError)) throw err;
      // Where its copy would go cannot be said: the copy it has, if any, is kept (as the collector does).
      undecided.add(name(source));
      return row('-', 'failed', `could not mutate it: ${describeMutationFailure(err, isSecret(source))}`);
    }
    if (!made) return undefined;
    const { desired, mutations } = made;
    let resource: ApiResource;
    try {
      resource = await this.discovery.resourceFor(gvkOf(desired));
    } catch (err) {
      if (!(err instanceof NoKindMatchError)) throw err;
      return row(copyLabel(desired), 'failed', `kind ${desired.kind ?? ''} is not served here`);
    }
    if (!resource.namespaced) delete desired.metadata.namespace;
    else if (!desired.metadata.namespace) return row(copyLabel(desired), 'failed', `${desired.kind ?? ''} is namespaced here, but the copy has no namespace`);
    places.add(copyPlace(desired));
    if (desired.metadata.namespace && !(await this.namespaceExists(desired.metadata.namespace))) {
      return row(copyLabel(desired), 'none', `waits for namespace ${desired.metadata.namespace} to exist here`);
    }
    const current = await this.local.getIfExists(resource, desired.metadata.namespace, desired.metadata.name ?? '', this.call());
    const decision = decideCopy(rule, p.ref, facts, { source, desired, current, syncStatus: mutations.syncStatus, clusters });
    const trust: TrustFacts = { localClusterID: facts.localClusterID, namespace: this.o.namespace, clusters, reserved: [], closedNamespaces: [hubCredentialsNamespace(this.o.namespace)], credentialsTarget };
    const policy = decision.action === 'none' ? undefined : mayHold(desired, { channel: rule.channel, from: p.ref.id, current }, trust);
    if (policy && !policy.allowed) return row(copyLabel(desired), 'refused', policy.reason);
    const part = specPart(resource);
    if (decision.action === 'create') return row(copyLabel(desired), 'create', 'no copy here yet', stringify(masked(undefined, applyBody(desired, part))[1]).trimEnd());
    if (decision.action === 'update' && current) {
      const update = planCopyUpdate(rule, source, desired, current, { part, localClusterID: facts.localClusterID, unkept: new Set() });
      if (update.policyError) return row(copyLabel(desired), 'failed', update.policyError);
      const { body, plan } = update;
      const drift = update.fields.length > 0 ? `edited here, not at its source: ${describeDrift(update.fields)}; ${update.policy}: ${driftOutcome(update)}` : undefined;
      const writes =
        (body !== undefined && applyNeeded(body, current, FIELD_MANAGER, part)) ||
        (plan.apply !== 'none' && decision.writeStatus && desired['status'] !== undefined && resource.subresources.includes('status') && applyNeeded(desired, current, FIELD_MANAGER, 'status'));
      if (!writes) return row(copyLabel(desired), 'none', drift ?? 'in sync');
      const adopting = decision.reason === DECISION_REASONS.adopt ? `takes over the local object there (adoptionPolicy ${adoptionPolicyOf(rule).policy})` : undefined;
      return row(copyLabel(desired), 'update', adopting ?? drift ?? 'the copy differs from what the rule makes', diffOf(current, body ?? desired));
    }
    if (decision.reason === DECISION_REASONS.locallyOwned && current) {
      // What each adoption policy would do, with what it would replace, before anyone chooses one.
      const { policy, why } = adoptionPolicyOf(rule);
      const replaced = replacedFields(current, desired);
      return row(copyLabel(desired), 'none', `a local object is in the way (adoptionPolicy ${policy}${why ? `: ${why}` : ''}); ${adoptionChoices(replaced)}`, replaced.length > 0 ? diffOf(current, applyBody(desired, part)) : undefined);
    }
    return row(copyLabel(desired), 'none', decision.reason);
  }

  /** Copies this rule made from the peer whose source is gone or goes elsewhere now. */
  private async deletions(rule: RuleState, p: Peer, facts: OwnershipFacts, sources: readonly KubeObject[], places: ReadonlySet<string>, undecided: ReadonlySet<string>): Promise<ExplainRow[]> {
    const present = new Set(sources.map(name));
    const rows: ExplainRow[] = [];
    for (const gvk of rule.targetGVKs) {
      for (const copy of await this.copiesOf(gvk)) {
        const id: SourceIdentity | undefined = sourceIdentityOf(copy);
        if (!id || id.clusterID !== p.ref.id || (id.rule ?? rule.name) !== rule.name || places.has(copyPlace(copy))) continue;
        const source = `${id.namespace ? `${id.namespace}/` : ''}${id.name}`;
        if (undecided.has(source)) continue;
        if (present.has(source)) {
          rows.push({ peer: p.ref.name, source, copy: copyLabel(copy), action: 'delete', reason: 'the rule no longer makes this copy: collected after the grace period' });
          continue;
        }
        const d = decideDelete(facts, id, copy);
        rows.push({ peer: p.ref.name, source, copy: copyLabel(copy), action: d.action === 'delete' ? 'delete' : 'none', reason: d.action === 'delete' ? 'its source is gone' : d.reason });
      }
    }
    return rows;
  }

  private async namespaceExists(ns: string): Promise<boolean> {
    return (await this.local.getIfExists(NAMESPACES, undefined, ns, this.call())) !== undefined;
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
    return (await this.local.list(resource, { ...this.call(), labelSelector: LABELS.ownership })).items;
  }
}
