// `trace`: one object followed across the group, from any member. Run on its source, or on a copy
// (then its source is found by the copy's source annotation, through any member that passed it
// on), it lists every member with its copy or its absence, as that member's sync would judge it:
// the same decision `explain` makes here (copy-judge.ts), asked of each member with the rules, the
// registry and the objects read from it. Peers are read only with the credentials this member
// holds (peer-access.ts), so what is said of them is inferred from what they let us read; what is
// said of this member is first-hand.
import {
  ANNOTATIONS,
  CLUSTER_FEATURES,
  CLUSTERS,
  gvkKey,
  gvkOf,
  isDisabled,
  LABELS,
  ownerOf,
  RESOURCE_SYNC_RULES,
  sourceIdentityOf,
  type FullGVK,
  type SourceIdentity,
} from '../core/api/index.ts';
import type { Cluster, ClusterFeature, KubeObject, ResourceSyncRule } from '../core/api/types.ts';
import { registryReaches, runsOurs } from '../core/registry/index.ts';
import {
  advertisedFeature,
  builtinRules,
  copyPlace,
  DECISION_REASONS,
  errorMessage,
  featuresSatisfied,
  FIELD_MANAGER,
  fieldPath,
  isLabelValue,
  parseSyncRecord,
  ruleState,
  type AdvertisedFeature,
  type DriftedField,
  type ManagedFieldsEntry,
  type OwnershipFacts,
  type PeerRef,
} from '../core/rules/index.ts';
import { speakerFor } from '../core/trust/index.ts';
import { Discovery, NoKindMatchError, type ApiResource, type ObjectReader } from '../kube/index.ts';
import { kubeSystemUID } from '../peers/identity.ts';
import { IN_SYNC, judgeCopy, objectLabel, type CopyJudgement, type MemberView } from './copy-judge.ts';
import { connectPeers, type PeerAccessOptions } from './peer-access.ts';

/**
 * - source: the object itself, where it is owned.
 * - in sync: the copy holds what the member's sync would write now.
 * - drifted: edited where it is, not at its source (what the drift policy does is said).
 * - differs: the member's sync would update it (the source or the rule changed since).
 * - absent: a rule there takes the source, and no copy is there (yet).
 * - blocked: a rule there takes the source, and something keeps its copy from being written.
 * - stale: a copy of it the member's rules no longer make there (collected after the grace period).
 * - no copy: no rule there takes it, or none makes a copy of it there.
 * - not judged: a copy of it, its source not read.
 * - not read: the member (or what trace needs of it) could not be read.
 */
export type TraceState = 'source' | 'in sync' | 'drifted' | 'differs' | 'absent' | 'blocked' | 'stale' | 'no copy' | 'not judged' | 'not read';

export interface TraceWrite {
  readonly manager: string;
  readonly operation: string;
  readonly time: string;
}

export interface TraceRow {
  readonly member: string;
  /** first-hand: the member trace runs on; inferred: a peer, judged from what it let us read. */
  readonly seen: 'first-hand' | 'inferred';
  /** `Kind namespace/name` of the member's copy (or of the source), `-` when there is none. */
  readonly object: string;
  /** The member's rule that makes the copy, `-` when none does. */
  readonly rule: string;
  readonly state: TraceState;
  readonly reason: string;
  /** Of a copy, the source's resourceVersion its content was first written from (its sync record); of the source, its own. */
  readonly sourceVersion?: string;
  /** Of a copy, the sync's last write; of the source, its last write by anyone. */
  readonly lastWrite?: TraceWrite;
  /** The fields edited where the copy is, and by whom (never their values). */
  readonly drift?: readonly (TraceWrite & { readonly field: string; readonly change: string })[];
  /** What the member's sync would write (Secret values hidden). */
  readonly diff?: string;
}

export interface Trace {
  /** The member trace ran on. */
  readonly cluster: string;
  /** `Kind namespace/name` asked for, there. */
  readonly object: string;
  /** The object traced, where it is owned; undefined when it could not be found (its row says why). */
  readonly source?: { readonly member: string; readonly object: string; readonly version: string };
  readonly rows: TraceRow[];
}

/** States of a copy that is not as its source says. */
const PROBLEMS: ReadonlySet<TraceState> = new Set(['drifted', 'differs', 'absent', 'blocked', 'stale']);

/** incomplete when something could not be read or judged, else differs when a copy is not in sync. */
export function traceOutcome(t: Pick<Trace, 'rows'>): 'in sync' | 'differs' | 'incomplete' {
  if (t.rows.some((r) => r.state === 'not read' || r.state === 'not judged')) return 'incomplete';
  return t.rows.some((r) => PROBLEMS.has(r.state)) ? 'differs' : 'in sync';
}

/** Decisions that mean the member makes no copy of the source at all. */
const NOT_MADE: ReadonlySet<string> = new Set([DECISION_REASONS.syncDisabledOnSource, DECISION_REASONS.ownedByLocalCluster, DECISION_REASONS.ownedByAnotherAliveCluster]);
/** Decisions that mean the copy is due once the member reaches the source. */
const NOT_YET: ReadonlySet<string> = new Set([DECISION_REASONS.sourceUnreachable, DECISION_REASONS.ownerNotReachedByPeer]);

/** A member's judgement of its copy as a trace state. */
export function stateOf(j: Pick<CopyJudgement, 'action' | 'reason' | 'current' | 'update'>): TraceState {
  if ((j.update?.fields.length ?? 0) > 0) return 'drifted';
  if (j.action === 'create') return 'absent';
  if (j.action === 'update') return 'differs';
  if (j.action !== 'none') return 'blocked';
  if (j.reason === IN_SYNC) return 'in sync';
  if (!j.current) return NOT_MADE.has(j.reason) ? 'no copy' : NOT_YET.has(j.reason) ? 'absent' : 'blocked';
  return 'blocked';
}

const timeOf = (e: ManagedFieldsEntry): string => (typeof e['time'] === 'string' ? e['time'] : '');

/** The newest write of `o` (by `manager` when given), from its managedFields. */
export function lastWrite(o: KubeObject, manager?: string): TraceWrite | undefined {
  const entries = ((o.metadata.managedFields ?? []) as ManagedFieldsEntry[]).filter((e) => manager === undefined || e.manager === manager);
  const last = entries.sort((a, b) => timeOf(b).localeCompare(timeOf(a)))[0];
  return last && { manager: last.manager ?? '', operation: last.operation ?? '', time: timeOf(last) };
}

/** The drifted fields as trace says them: where, how and by whom, never what they hold. */
export function driftOf(fields: readonly DriftedField[]): TraceRow['drift'] {
  return fields.map((f) => ({ field: fieldPath(f.segments), change: f.change, manager: f.manager, operation: f.operation, time: f.time }));
}

/**
 * The resource a command-line kind names, as kubectl takes it: its kind, plural, singular or
 * short name, any case, optionally followed by `.group` or `.version.group`. Of several groups, the
 * core group's; otherwise the name must say which.
 */
export function resolveKind(resources: readonly ApiResource[], arg: string): ApiResource {
  const dot = arg.indexOf('.');
  const head = (dot < 0 ? arg : arg.slice(0, dot)).toLowerCase();
  const rest = dot < 0 ? undefined : arg.slice(dot + 1);
  const found = resources.filter(
    (r) => r.verbs.includes('get') && (r.kind.toLowerCase() === head || r.resource === head || (r.shortNames ?? []).includes(head)) && (rest === undefined || rest === r.group || rest === `${r.version}.${r.group}`),
  );
  if (found.length === 0) throw new Error(`the server has no resource type "${arg}"`);
  const groups = [...new Set(found.map((r) => r.group))];
  const group = groups.includes('') ? '' : groups.length === 1 ? groups[0] : undefined;
  if (group === undefined) throw new Error(`"${arg}" names a kind in several groups: say which, as one of ${groups.map((g) => `${head}.${g}`).join(', ')}`);
  // Discovery lists each group's preferred version first.
  return found.find((r) => r.group === group)!;
}

/** A source identity as a key: which object, in which cluster, whatever rule copied it. */
const identityKey = (id: Pick<SourceIdentity, 'clusterID' | 'group' | 'kind' | 'namespace' | 'name'>): string => JSON.stringify([id.clusterID, id.group, id.kind, id.namespace, id.name]);
/** The key of `o` as the source of copies made from member `memberID`. */
const asSource = (memberID: string, o: KubeObject): string => {
  const g = gvkOf(o);
  return identityKey({ clusterID: memberID, group: g.group, kind: g.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '' });
};

/**
 * Of `found` (objects per member ID), the copies of the source `seeds` name: those whose source
 * annotation names a seed, or a copy already matched (a member that passed it on), to a fixpoint.
 */
export function copiesOf(seeds: Iterable<string>, found: readonly { readonly memberID: string; readonly object: KubeObject }[]): Set<KubeObject> {
  const known = new Set(seeds);
  const matched = new Set<KubeObject>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const f of found) {
      const id = sourceIdentityOf(f.object);
      if (matched.has(f.object) || !id || !known.has(identityKey(id))) continue;
      matched.add(f.object);
      known.add(asSource(f.memberID, f.object));
      grew = true;
    }
  }
  return matched;
}

/**
 * The rows of every member of the registry `clusters`, in its order: its own, or `none` for a
 * member with none; one set of rows a member (several Clusters may name one, one speaks for it),
 * and last those of members the registry has no Cluster of.
 */
export function inRegistryOrder(clusters: readonly Cluster[], byMember: ReadonlyMap<string, readonly TraceRow[]>, none: (member: string) => TraceRow): TraceRow[] {
  const rows: TraceRow[] = [];
  const done = new Set<string>();
  for (const c of clusters) {
    const name = c.metadata.name ?? '';
    if (done.has(name) || (!byMember.has(name) && speakerFor(clusters, c.spec?.clusterID ?? '') !== c && !isDisabled(c))) continue;
    done.add(name);
    rows.push(...(byMember.get(name) ?? [none(name)]));
  }
  for (const [name, mine] of byMember) if (!done.has(name)) rows.push(...mine);
  return rows;
}

/**
 * Of a member's judgements (by rule), those that say something of the source's copy: one that
 * finds the copy at its place delivered by another of the member's rules from this same source
 * adds nothing to that rule's.
 */
export function ownJudgements<T extends { readonly rule: string; readonly j: Pick<CopyJudgement, 'reason' | 'current' | 'place'> }>(judged: readonly T[], seeds: ReadonlySet<string>): T[] {
  return judged.filter(({ j }) => {
    const recorded = j.current && j.reason === DECISION_REASONS.deliveredByAnotherSource ? sourceIdentityOf(j.current) : undefined;
    return !recorded || !seeds.has(identityKey(recorded)) || !judged.some((o) => o.rule === recorded.rule && o.j.place === j.place);
  });
}

/** What one list of a peer's kind may bring back: a peer decides how many objects it holds. */
export const MAX_LISTED = 500;
/** How much of a version or a mark a peer wrote is said: the controller writes far less. */
const MAX_VERSION = 64;
const MAX_MARK = 1024;

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export interface TraceTarget {
  /** As kubectl takes it: `configmap`, `ConfigMap`, `deployments.apps`… */
  readonly kind: string;
  readonly name: string;
  /** For a namespaced kind. */
  readonly namespace: string;
}

export type TraceOptions = Omit<PeerAccessOptions, 'userAgent'>;

/** A member as trace reads it. */
interface Member {
  readonly name: string;
  readonly id: string;
  readonly seen: TraceRow['seen'];
  readonly view: MemberView;
  /** The IDs of the members it reaches, as far as trace can tell (first-hand here, its registry's word elsewhere). */
  readonly alive: ReadonlySet<string>;
  /** Its own Cluster, as it holds it. */
  readonly own: Cluster | undefined;
}

/** Where a member's rule puts the source's copy. */
type Spot = NonNullable<CopyJudgement['spot']>;

/** Where the traced object is owned. */
interface Origin {
  readonly member: Member;
  readonly object: KubeObject;
  readonly resource: ApiResource;
}

const call = (signal: AbortSignal | undefined): { signal?: AbortSignal } => (signal ? { signal } : {});

export class Tracer {
  private readonly local: ObjectReader;
  private readonly o: TraceOptions;
  private readonly featuresOf = new Map<string, Promise<AdvertisedFeature[]>>();

  constructor(local: ObjectReader, opts: TraceOptions) {
    this.local = local;
    this.o = opts;
  }

  async trace(target: TraceTarget): Promise<Trace> {
    const discovery = new Discovery(this.local);
    const resource = resolveKind(await discovery.all(), target.kind);
    const namespace = resource.namespaced ? target.namespace : undefined;
    const localID = await kubeSystemUID(this.local, this.o.signal);
    const clusters = (await this.local.list<Cluster>(CLUSTERS, call(this.o.signal))).items;
    const cluster = clusters.find((c) => c.spec?.clusterID === localID)?.metadata.name ?? '(no local Cluster)';
    const asked = await this.local.getIfExists(resource, namespace, target.name, call(this.o.signal));
    if (!asked) throw new Error(`${resource.kind} ${namespace ? `${namespace}/` : ''}${target.name} is not on ${cluster}`);
    const { peers, skipped } = await connectPeers(this.local, clusters, localID, { ...this.o, userAgent: 'cluster-registry/trace' });
    try {
      const now = Date.now();
      const here: Member = {
        name: cluster,
        id: localID,
        seen: 'first-hand',
        view: { id: localID, reader: this.local, discovery, clusters, namespace: this.o.namespace, here: 'here', ...call(this.o.signal) },
        alive: new Set(peers.map((p) => p.ref.id)),
        own: clusters.find((c) => c.spec?.clusterID === localID),
      };
      const members = new Map<string, Member>([[localID, here]]);
      for (const p of peers) {
        const reached = p.clusters.map((c) => c.spec?.clusterID ?? '').filter((id) => id !== p.ref.id && registryReaches(p.clusters, id, -Infinity, now));
        members.set(p.ref.id, {
          name: p.ref.name,
          id: p.ref.id,
          seen: 'inferred',
          view: { id: p.ref.id, reader: p.rest, discovery: new Discovery(p.rest), clusters: p.clusters, namespace: this.o.namespace, here: 'there', ...call(this.o.signal) },
          alive: new Set(reached),
          own: p.clusters.find((c) => c.spec?.clusterID === p.ref.id),
        });
      }
      const unread = new Map(skipped.map((s) => [s.peer, s.why]));
      const walk = await this.origin(asked, resource, here, members, clusters, unread);
      const byMember = new Map<string, TraceRow[]>();
      const add = (m: string, r: TraceRow): void => void (byMember.get(m) ?? byMember.set(m, []).get(m)!).push(r);
      const origin = 'member' in walk ? walk : undefined;
      if ('member' in walk) add(walk.member.name, this.sourceRow(walk));
      else add(walk.where, { member: walk.where, seen: walk.where === cluster ? 'first-hand' : 'inferred', object: walk.object, rule: '-', state: 'not read', reason: walk.why });
      // What each readable member makes of the source (all at once: each member is read on its own
      // connection), then the copies of it that no rule there judged.
      const found: { memberID: string; object: KubeObject }[] = [];
      const judged = new Map<string, ReadonlyMap<string, Spot>>();
      const others = [...members.values()].filter((m) => m !== origin?.member);
      await Promise.all(
        others.map(async (m) => {
          const places = new Map<string, Spot>();
          judged.set(m.id, places);
          try {
            if (origin) for (const r of await this.judged(m, origin, walk.seeds, places)) add(m.name, r);
            for (const object of await this.candidates(m, origin, asked, walk.seeds, [...places.values()], m === here ? asked : undefined)) found.push({ memberID: m.id, object });
          } catch (err) {
            add(m.name, { member: m.name, seen: m.seen, object: '-', rule: '-', state: 'not read', reason: errorMessage(err) });
          }
        }),
      );
      for (const object of copiesOf(walk.seeds, found)) {
        const memberID = found.find((f) => f.object === object)!.memberID;
        if (judged.get(memberID)?.has(copyPlace(object))) continue;
        const m = members.get(memberID)!;
        add(m.name, this.unjudgedRow(m, object, origin !== undefined));
      }
      const none = (m: string): TraceRow => {
        const seen = m === cluster ? 'first-hand' : 'inferred';
        if (unread.has(m)) return { member: m, seen, object: '-', rule: '-', state: 'not read', reason: unread.get(m)! };
        return origin
          ? { member: m, seen, object: '-', rule: '-', state: 'no copy', reason: `no rule ${m === cluster ? 'here' : 'there'} takes it` }
          : { member: m, seen, object: '-', rule: '-', state: 'not judged', reason: 'no copy of it found; whether one is due cannot be said without its source' };
      };
      const rows = inRegistryOrder(clusters, byMember, none);
      return { cluster, object: `${resource.kind} ${namespace ? `${namespace}/` : ''}${target.name}`, ...(origin ? { source: { member: origin.member.name, object: objectLabel(origin.object), version: origin.object.metadata.resourceVersion ?? '' } } : {}), rows };
    } finally {
      for (const p of peers) p.rest.close();
    }
  }

  /**
   * The object's source, followed from copy to source through each member that passed it on (at
   * most once per member), with the identities met on the way: a copy of any of them is a copy of
   * the source. When it cannot be followed, where and why.
   */
  private async origin(
    asked: KubeObject,
    resource: ApiResource,
    here: Member,
    members: ReadonlyMap<string, Member>,
    clusters: readonly Cluster[],
    unread: ReadonlyMap<string, string>,
  ): Promise<(Origin & { seeds: Set<string> }) | { where: string; object: string; why: string; seeds: Set<string> }> {
    const seeds = new Set<string>();
    let at: Origin = { member: here, object: asked, resource };
    for (let hop = 0; hop <= members.size; hop++) {
      seeds.add(asSource(at.member.id, at.object));
      if (ownerOf(at.object) === '') return { ...at, seeds };
      const id = sourceIdentityOf(at.object);
      const label = objectLabel(at.object);
      if (!id) return { where: at.member.name, object: label, why: `its source annotation (${ANNOTATIONS.source}) is missing or not one this controller writes`, seeds };
      seeds.add(identityKey(id));
      const from = members.get(id.clusterID);
      const name = speakerFor(clusters, id.clusterID)?.metadata.name;
      const source = `${id.kind} ${id.namespace ? `${id.namespace}/` : ''}${id.name}`;
      if (!from) {
        const why = name === undefined ? `it was copied from cluster ${id.clusterID}, which has no Cluster here` : `it was copied from ${name}, which could not be read: ${unread.get(name) ?? 'not connected'}`;
        return { where: name ?? id.clusterID, object: source, why, seeds };
      }
      let served: ApiResource | undefined;
      let object: KubeObject | undefined;
      try {
        served = await servedAs(from.view.discovery, id);
        object = served && (await from.view.reader.getIfExists(served, id.namespace || undefined, id.name, call(this.o.signal)));
      } catch (err) {
        return { where: from.name, object: source, why: `it could not be read: ${errorMessage(err)}`, seeds };
      }
      if (!served || !object) return { where: from.name, object: source, why: `${label} was copied from it, and it is not there`, seeds };
      at = { member: from, object, resource: served };
    }
    return { where: at.member.name, object: objectLabel(at.object), why: 'its copies name each other as their sources: no member owns it', seeds };
  }

  private sourceRow(origin: Origin): TraceRow {
    const o = origin.object;
    const notes = [
      ANNOTATIONS.resourceSyncDisabled in (o.metadata.annotations ?? {}) ? `marked ${ANNOTATIONS.resourceSyncDisabled}: no copy of it is made` : '',
      o.metadata.annotations?.[ANNOTATIONS.driftPolicy] ? `its copies' drift policy: ${o.metadata.annotations[ANNOTATIONS.driftPolicy]}` : '',
      o.metadata.deletionTimestamp ? 'being deleted: its copies go with it' : '',
    ].filter(Boolean);
    const written = lastWrite(o);
    return { member: origin.member.name, seen: origin.member.seen, object: objectLabel(o), rule: '-', state: 'source', reason: notes.join('; '), ...(o.metadata.resourceVersion ? { sourceVersion: o.metadata.resourceVersion } : {}), ...(written ? { lastWrite: written } : {}) };
  }

  /** A member's copies of the source, as each of its rules that takes it judges them; adds where each goes to `places`. */
  private async judged(m: Member, origin: Origin, seeds: ReadonlySet<string>, places: Map<string, Spot>): Promise<TraceRow[]> {
    const g = gvkOf(origin.object);
    const listed = (await m.view.reader.list<ResourceSyncRule>(RESOURCE_SYNC_RULES, call(this.o.signal))).items;
    const rules = [
      ...builtinRules(this.o.namespace),
      ...listed.filter((r) => r.spec?.groupVersionKind?.kind === g.kind && (r.spec.groupVersionKind.group ?? '') === g.group).map((r) => ruleState(r.metadata.name ?? '', r.spec, r, this.o.namespace)),
    ].filter((r) => r.compiled && r.sourceGVK.group === g.group && r.sourceGVK.kind === g.kind);
    // How the member names the source's member, and that member's own entry of itself, as the rules see a peer.
    const fromName = speakerFor(m.view.clusters, origin.member.id)?.metadata.name ?? origin.member.name;
    const from: PeerRef = { id: origin.member.id, name: fromName, ownCluster: () => origin.member.view.clusters.find((c) => c.metadata.name === fromName) };
    const facts: OwnershipFacts = {
      localClusterID: m.id,
      syncedFromClusterID: origin.member.id,
      alivePeerIDs: m.alive,
      recordedSourceLive: () => true,
      peerReaches: (id) => id === origin.member.id || registryReaches(origin.member.view.clusters, id, -Infinity, Date.now()),
      ownerRegistered: (id) => m.view.clusters.some((c) => c.spec?.clusterID === id),
    };
    const other = m.own && !runsOurs(m.own) ? `; ${m.name} runs another controller: judged as ours would` : '';
    const judged: { rule: string; j: CopyJudgement }[] = [];
    for (const rule of rules) {
      if (!rule.ignoresFeatures && !featuresSatisfied(rule.spec.clusterFeatureMatch, await this.features(origin))) continue;
      const source = await this.sourceAt(origin, rule.sourceGVK);
      const j = source && (await judgeCopy(m.view, rule, from, facts, source));
      if (!j) continue;
      if (j.place && j.spot) places.set(j.place, j.spot);
      judged.push({ rule: rule.name, j });
    }
    return ownJudgements(judged, seeds).map(({ rule, j }) => {
      const record = j.current && parseSyncRecord(j.current.metadata.annotations?.[ANNOTATIONS.syncRecord]);
      const written = j.current && lastWrite(j.current, FIELD_MANAGER);
      const drifted = j.update?.fields ?? [];
      return {
        member: m.name,
        seen: m.seen,
        object: j.current ? objectLabel(j.current) : j.copy,
        rule,
        state: stateOf(j),
        reason: `${j.reason}${other}`,
        ...(record ? { sourceVersion: cut(record.sourceVersion, MAX_VERSION) } : {}),
        ...(written ? { lastWrite: written } : {}),
        ...(drifted.length > 0 ? { drift: driftOf(drifted) } : {}),
        ...(j.diff ? { diff: j.diff } : {}),
      };
    });
  }

  /**
   * Objects of the member that may be copies of the source, found by the ownership label: of its
   * kind and of the kinds the member's rules make of it, in its namespace and wherever the member's
   * rules put its copies (and the object asked for, on the member trace runs on). At most
   * MAX_LISTED a list.
   */
  private async candidates(m: Member, origin: Origin | undefined, asked: KubeObject, seeds: ReadonlySet<string>, spots: readonly Spot[], mine: KubeObject | undefined): Promise<KubeObject[]> {
    const source = origin?.object ?? asked;
    const owner = origin ? origin.member.id : ownerOf(asked);
    if (!owner || !isLabelValue(owner) || seeds.size === 0) return mine ? [mine] : [];
    const kinds = new Map<string, FullGVK>([[gvkKey(gvkOf(source)), gvkOf(source)]]);
    const namespaces = new Set<string>([source.metadata.namespace ?? '', asked.metadata.namespace ?? '']);
    for (const { gvk, namespace } of spots) {
      kinds.set(gvkKey(gvk), gvk);
      namespaces.add(namespace ?? '');
    }
    const out: KubeObject[] = mine ? [mine] : [];
    for (const gvk of kinds.values()) {
      const resource = await servedAs(m.view.discovery, gvk);
      if (!resource) continue;
      for (const ns of resource.namespaced ? [...namespaces].filter(Boolean) : [undefined]) {
        const list = await m.view.reader.list(resource, { ...call(this.o.signal), ...(ns ? { namespace: ns } : {}), labelSelector: `${LABELS.ownership}=${owner}`, limit: MAX_LISTED });
        out.push(...list.items.slice(0, MAX_LISTED).filter((o) => o.metadata.uid !== mine?.metadata.uid));
      }
    }
    return out;
  }

  /** A copy of the source no rule of the member judged: one its rules no longer make there, or one whose source was not read. */
  private unjudgedRow(m: Member, copy: KubeObject, sourceRead: boolean): TraceRow {
    const id = sourceIdentityOf(copy);
    const record = parseSyncRecord(copy.metadata.annotations?.[ANNOTATIONS.syncRecord]);
    const written = lastWrite(copy, FIELD_MANAGER);
    const mark = copy.metadata.annotations?.[ANNOTATIONS.drifted];
    const marked = mark === undefined ? undefined : cut(mark, MAX_MARK);
    const reason = sourceRead
      ? "a copy its member's rules no longer make: collected after the grace period"
      : `its source could not be read${marked !== undefined ? `; marked drifted: ${marked}` : ''}`;
    return {
      member: m.name,
      seen: m.seen,
      object: objectLabel(copy),
      rule: id?.rule ?? '-',
      state: sourceRead ? 'stale' : 'not judged',
      reason,
      ...(record ? { sourceVersion: cut(record.sourceVersion, MAX_VERSION) } : {}),
      ...(written ? { lastWrite: written } : {}),
    };
  }

  /** The ClusterFeatures the source's member advertises, read once. */
  private features(origin: Origin): Promise<AdvertisedFeature[]> {
    let f = this.featuresOf.get(origin.member.id);
    if (!f) {
      f = origin.member.view.reader.list<ClusterFeature>(CLUSTER_FEATURES, call(this.o.signal)).then((l) => l.items.map(advertisedFeature));
      this.featuresOf.set(origin.member.id, f);
    }
    return f;
  }

  /** The source as a rule reads it: in the rule's version of its kind; undefined when its member does not serve that version. */
  private async sourceAt(origin: Origin, gvk: FullGVK): Promise<KubeObject | undefined> {
    if (gvk.version === origin.resource.version) return origin.object;
    let resource: ApiResource;
    try {
      resource = await origin.member.view.discovery.resourceFor(gvk);
    } catch (err) {
      if (err instanceof NoKindMatchError) return undefined;
      throw err;
    }
    return origin.member.view.reader.getIfExists(resource, origin.object.metadata.namespace, origin.object.metadata.name ?? '', call(this.o.signal));
  }
}

/** The resource serving a kind on a member: in the version given when served, else its preferred one; undefined when not served. */
async function servedAs(discovery: MemberView['discovery'], gvk: Pick<FullGVK, 'group' | 'kind'> & { version?: string }): Promise<ApiResource | undefined> {
  const all = await discovery.all();
  return all.find((r) => r.group === gvk.group && r.kind === gvk.kind && r.version === gvk.version) ?? all.find((r) => r.group === gvk.group && r.kind === gvk.kind);
}
