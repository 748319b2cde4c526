// `trace`: one object followed across the group, from any member. Run on its source, or on a copy
// (then its source is found by the copy's source annotation, through any member that passed it
// on), it lists every member with its copy or its absence, as that member's sync would judge it:
// the same decision `explain` makes here (copy-judge.ts), asked of each member with the rules, the
// registry and the objects read from it. Peers are read only with the credentials this member
// holds (peer-access.ts), so what is said of them is inferred from what they let us read; what is
// said of this member is first-hand. The rows, and the decisions that make them, are trace-rows.ts.
import {
  ANNOTATIONS,
  CLUSTER_FEATURES,
  CLUSTERS,
  gvkKey,
  gvkOf,
  LABELS,
  ownerOf,
  isSecret,
  RESOURCE_SYNC_RULES,
  recordsOwner,
  sourceIdentityOf,
  sourceObjectKey,
  type FullGVK,
} from '../core/api/index.ts';
import type { Cluster, ClusterFeature, KubeObject, ResourceSyncRule } from '../core/api/types.ts';
import { cut } from '../core/api/text.ts';
import { reachedIDs, registryReaches, runsOurs } from '../core/registry/index.ts';
import {
  advertisedFeature,
  builtinRules,
  copyPlace,
  DECISION_REASONS,
  errorMessage,
  featuresSatisfied,
  FIELD_MANAGER,
  isObject,
  isLabelValue,
  parseSyncRecord,
  ruleState,
  ruleTakes,
  type AdvertisedFeature,
  type OwnershipFacts,
  type PeerRef,
  type RuleState,
} from '../core/rules/index.ts';
import { RULE_LIMITS } from '../core/rules/match.ts';
import { speakerFor } from '../core/trust/index.ts';
import { Discovery, NoKindMatchError, type ApiResource, type ObjectReader } from '../kube/index.ts';
import { kubeSystemUID } from '../peers/identity.ts';
import { judgeCopy, objectLabel, type CopyJudgement, type MemberView } from './copy-judge.ts';
import { call, connectPeers, type PeerAccessOptions } from './peer-access.ts';
import {
  asSource,
  capped,
  copiesOf,
  driftOf,
  inRegistryOrder,
  lastWrite,
  MAX_DIFF,
  MAX_LABEL,
  MAX_VERSION,
  MAX_WORD,
  ownJudgements,
  recordRow,
  SECRET_NOT_RENDERED,
  stateOf,
  unjudged,
  unjudgedRow,
  unread,
  wellFormed,
  withinBudget,
  type Trace,
  type TraceRow,
} from './trace-rows.ts';

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

/** What one list of a peer's kind may bring back: a peer decides how many objects it holds. */
export const MAX_LISTED = 500;
/**
 * How many of a member's ResourceSyncRules of the source's kind are judged, and how many kinds and
 * namespaces its copies are looked for in: each costs requests to that member (or the source's),
 * and a member decides how many rules it holds. Far above a real group's; past them the trace is
 * incomplete, and says so.
 */
export const MAX_RULES_JUDGED = 100;
export const MAX_KINDS_LISTED = RULE_LIMITS.targetKinds;
export const MAX_NAMESPACES_LISTED = 16;
/** All that is read of one member, at most: a member answering each request just in time must not hold the trace for one timeout per request. */
export const MEMBER_DEADLINE_MS = 60_000;
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
  /** Every read of it: the command's signal, or its own deadline. */
  readonly signal: AbortSignal;
}

/** Where a member's rule puts the source's copy. */
type Spot = NonNullable<CopyJudgement['spot']>;

/** Where the traced object is owned. */
interface Origin {
  readonly member: Member;
  readonly object: KubeObject;
  readonly resource: ApiResource;
}

/** What a member's rules make of the source: its rows, and (of a Secret on a peer, where they are matched only) whether one takes it and the kinds they make of it. */
interface Ruled {
  readonly rows: TraceRow[];
  readonly taken?: boolean;
  readonly spots?: Spot[];
}

/** What was read of one member other than the source's. */
interface Reading {
  readonly m: Member;
  readonly rows: TraceRow[];
  /** Where its judged rules put copies. */
  readonly places: Map<string, Spot>;
  /** Objects that may be copies of the source. */
  found: KubeObject[];
  /** Of a Secret source on a peer: whether a rule there takes it (matched, never rendered). */
  taken?: boolean;
  failed?: string;
}

/** A member's failure as its row says it: a deadline that passed, as such. */
function failureOf(err: unknown, m: Pick<Member, 'signal'>, command: AbortSignal | undefined): string {
  if (m.signal.aborted && !command?.aborted) return `reading it took longer than ${MEMBER_DEADLINE_MS / 1000}s: left out`;
  return errorMessage(err);
}

export class Tracer {
  private readonly local: ObjectReader;
  private readonly o: TraceOptions;
  private readonly featuresOf = new Map<string, Promise<AdvertisedFeature[]>>();
  private readonly sources = new Map<string, Promise<KubeObject | undefined>>();
  /** What following relayed copies read, once each: a member may hold many rules of the kind. */
  private readonly relayReads = new Map<string, Promise<unknown>>();

  constructor(local: ObjectReader, opts: TraceOptions) {
    this.local = local;
    this.o = opts;
  }

  private deadline(): AbortSignal {
    const own = AbortSignal.timeout(MEMBER_DEADLINE_MS);
    return this.o.signal ? AbortSignal.any([this.o.signal, own]) : own;
  }

  async trace(target: TraceTarget): Promise<Trace> {
    const discovery = new Discovery(this.local, call(this.o.signal));
    const resource = resolveKind(await discovery.all(), target.kind);
    if (resource.namespaced && !target.namespace) throw new Error(`${resource.kind} is namespaced: say which namespace`);
    const namespace = resource.namespaced ? target.namespace : undefined;
    const localID = await kubeSystemUID(this.local, this.o.signal);
    const clusters = (await this.local.list<Cluster>(CLUSTERS, call(this.o.signal))).items;
    const cluster = clusters.find((c) => c.spec?.clusterID === localID)?.metadata.name ?? '(no local Cluster)';
    const asked = await this.local.getIfExists(resource, namespace, target.name, call(this.o.signal));
    if (!asked) throw new Error(`${resource.kind} ${namespace ? `${namespace}/` : ''}${target.name} is not on ${cluster}`);
    const { peers, skipped } = await connectPeers(this.local, clusters, localID, { ...this.o, userAgent: 'cluster-registry/trace' });
    try {
      const now = Date.now();
      const hereSignal = this.deadline();
      const here: Member = {
        name: cluster,
        id: localID,
        seen: 'first-hand',
        view: { id: localID, reader: this.local, discovery, clusters, namespace: this.o.namespace, here: 'here', signal: hereSignal, otherController: otherController(clusters, localID) },
        alive: new Set(peers.map((p) => p.ref.id)),
        signal: hereSignal,
      };
      const members = new Map<string, Member>([[localID, here]]);
      for (const p of peers) {
        const reached = reachedIDs(p.clusters, -Infinity, now);
        reached.delete(p.ref.id);
        const signal = this.deadline();
        members.set(p.ref.id, {
          name: p.ref.name,
          id: p.ref.id,
          seen: 'inferred',
          // Peers' rules are compiled with this controller's namespace: a group shares one.
          view: { id: p.ref.id, reader: p.rest, discovery: new Discovery(p.rest, { signal }), clusters: p.clusters, namespace: this.o.namespace, here: 'there', signal, otherController: otherController(p.clusters, p.ref.id) },
          alive: reached,
          signal,
        });
      }
      const notRead = new Map(skipped.map((s) => [s.peer, s.why]));
      const walk = await this.origin(asked, resource, here, members, clusters, notRead);
      const byMember = new Map<string, TraceRow[]>();
      // A member with no rows is said by `none` below.
      const add = (m: string, ...r: TraceRow[]): void => void (r.length > 0 && (byMember.get(m) ?? byMember.set(m, []).get(m)!).push(...r));
      const origin = 'member' in walk ? walk : undefined;
      if ('member' in walk) add(walk.member.name, this.sourceRow(walk));
      else add(walk.where, { member: walk.where, seen: walk.where === cluster ? 'first-hand' : 'inferred', object: walk.object, rule: '-', state: walk.gone ? 'gone' : 'not read', reason: walk.why });
      const gone = 'gone' in walk && walk.gone === true;
      // Of a Secret, a peer's rules are matched, never rendered: what they render may quote its values.
      const secret = origin !== undefined && isSecret(origin.object);
      // What each readable member makes of the source (all at once: each member is read on its own
      // connection), then the copies of it that no rule there judged; each member under its own catch.
      const readings = await Promise.all(
        [...members.values()]
          .filter((m) => m !== origin?.member)
          .map(async (m): Promise<Reading> => {
            const r: Reading = { m, rows: [], places: new Map(), found: [] };
            try {
              const ruled = secret && m !== here ? await this.secretTaken(m, origin) : origin ? await this.judged(m, origin, walk.seeds, r.places, members) : undefined;
              r.rows.push(...(ruled?.rows ?? []));
              if (ruled?.taken !== undefined) r.taken = ruled.taken;
              const spots = ruled?.spots ?? [...r.places.values()];
              const c = await this.candidates(m, origin, asked, walk.seeds, spots, m === here ? asked : undefined);
              r.found = c.objects;
              if (c.short) r.rows.push(unjudged(m, c.short));
            } catch (err) {
              r.failed = failureOf(err, m, this.o.signal);
            }
            return r;
          }),
      );
      const copies = copiesOf(
        walk.seeds,
        readings.flatMap((r) => r.found.map((object) => ({ memberID: r.m.id, object }))),
      );
      for (const r of readings) {
        if (r.failed !== undefined) {
          add(r.m.name, unread(r.m, r.failed));
          continue;
        }
        try {
          const rows = [...r.rows];
          const mine = r.found.filter((o) => copies.has(o) && !r.places.has(copyPlace(o)));
          if (secret && r.m !== here && origin) {
            rows.push(...mine.map((o) => recordRow(r.m, o, origin.object)));
            if (mine.length === 0 && r.taken) rows.push({ member: r.m.name, seen: r.m.seen, object: '-', rule: '-', state: 'absent', reason: `a rule there takes it, and no copy of it was found where its copies are looked for; ${SECRET_NOT_RENDERED}` });
          } else rows.push(...mine.map((o) => unjudgedRow(r.m, o, origin ? 'stale' : gone ? 'gone' : 'unread')));
          add(r.m.name, ...capped(r.m, rows));
        } catch (err) {
          add(r.m.name, unread(r.m, errorMessage(err)));
        }
      }
      const none = (m: string): TraceRow => {
        const seen = m === cluster ? 'first-hand' : 'inferred';
        if (notRead.has(m)) return { member: m, seen, object: '-', rule: '-', state: 'not read', reason: notRead.get(m)! };
        if (origin) return { member: m, seen, object: '-', rule: '-', state: 'no copy', reason: `no rule ${m === cluster ? 'here' : 'there'} takes it` };
        if (gone) return { member: m, seen, object: '-', rule: '-', state: 'no copy', reason: "its source is gone: no copy of it is due (copies were looked for in its namespace and the one asked for only)" };
        return { member: m, seen, object: '-', rule: '-', state: 'not judged', reason: 'no copy of it found; whether one is due cannot be said without its source' };
      };
      const rows = withinBudget(inRegistryOrder(clusters, byMember, none));
      return {
        cluster,
        object: `${resource.kind} ${namespace ? `${namespace}/` : ''}${target.name}`,
        ...(origin ? { source: { member: origin.member.name, object: objectLabel(origin.object), version: cut(origin.object.metadata.resourceVersion ?? '', MAX_VERSION) } } : {}),
        rows,
      };
    } finally {
      for (const p of peers) p.rest.close();
    }
  }

  /**
   * The object's source, followed from copy to source through each member that passed it on (each
   * member once, and only to an object of the kind asked for: a copy's source annotation is its
   * member's word), with the identities met on the way: a copy of any of them is a copy of the
   * source. When it cannot be followed, where and why.
   */
  private async origin(
    asked: KubeObject,
    resource: ApiResource,
    here: Member,
    members: ReadonlyMap<string, Member>,
    clusters: readonly Cluster[],
    notRead: ReadonlyMap<string, string>,
  ): Promise<(Origin & { seeds: Set<string> }) | { where: string; object: string; why: string; seeds: Set<string>; gone?: true }> {
    const seeds = new Set<string>();
    const visited = new Set<string>();
    let at: Origin = { member: here, object: asked, resource };
    for (;;) {
      visited.add(at.member.id);
      seeds.add(asSource(at.member.id, at.object));
      if (ownerOf(at.object) === '') return { ...at, seeds };
      const id = sourceIdentityOf(at.object);
      const label = objectLabel(at.object);
      if (!id) return { where: at.member.name, object: label, why: `its source annotation (${ANNOTATIONS.source}) is missing or not one this controller writes`, seeds };
      seeds.add(sourceObjectKey(id));
      const from = members.get(id.clusterID);
      const name = speakerFor(clusters, id.clusterID)?.metadata.name;
      const source = `${id.kind} ${id.namespace ? `${id.namespace}/` : ''}${id.name}`;
      if (id.group !== resource.group || id.kind !== resource.kind) {
        return { where: at.member.name, object: label, why: `its source annotation names a ${id.kind}${id.group ? `.${id.group}` : ''}, not a ${resource.kind}: not followed`, seeds };
      }
      if (!from) {
        const why = name === undefined ? `it was copied from cluster ${id.clusterID}, which has no Cluster here` : `it was copied from ${name}, which could not be read: ${notRead.get(name) ?? 'not connected'}`;
        return { where: name ?? id.clusterID, object: source, why, seeds };
      }
      if (visited.has(from.id)) return { where: from.name, object: source, why: 'its copies name each other as their sources: no member owns it', seeds };
      let served: ApiResource | undefined;
      let object: unknown;
      try {
        served = await servedAs(from.view.discovery, id);
        object = served && (await from.view.reader.getIfExists(served, id.namespace || undefined, id.name, call(from.signal)));
      } catch (err) {
        return { where: from.name, object: source, why: `it could not be read: ${failureOf(err, from, this.o.signal)}`, seeds };
      }
      if (!served) return { where: from.name, object: source, why: `${label} was copied from it, and its kind is not served there`, seeds };
      if (!object && recordsOwner(at.object)) return { where: from.name, object: source, why: `${label} was copied from it, and it is not there: deleted, so its sync deletes the copies`, seeds, gone: true };
      // A member that passed it on no longer holds its copy: whether the source is still there is not known.
      if (!object) return { where: from.name, object: source, why: `${label} was copied from its copy, which it no longer holds: the source could not be followed further`, seeds };
      if (!wellFormed(object)) return { where: from.name, object: source, why: 'what it returned is not an object as an API server returns one', seeds };
      at = { member: from, object, resource: served };
    }
  }

  private sourceRow(origin: Origin): TraceRow {
    const o = origin.object;
    const policy = o.metadata.annotations?.[ANNOTATIONS.driftPolicy];
    const notes = [
      ANNOTATIONS.resourceSyncDisabled in (o.metadata.annotations ?? {}) ? `marked ${ANNOTATIONS.resourceSyncDisabled}: no copy of it is made` : '',
      policy ? `its copies' drift policy: ${cut(policy, MAX_WORD)}` : '',
      o.metadata.deletionTimestamp ? 'being deleted: its copies go with it' : '',
    ].filter(Boolean);
    const written = lastWrite(o);
    const version = o.metadata.resourceVersion;
    return { member: origin.member.name, seen: origin.member.seen, object: cut(objectLabel(o), MAX_LABEL), rule: '-', state: 'source', reason: notes.join('; '), ...(version ? { sourceVersion: cut(version, MAX_VERSION) } : {}), ...(written ? { lastWrite: written } : {}) };
  }

  /** A member's rules that may take the source's kind (its own and the built-in ones), at most MAX_RULES_JUDGED of its own; a row when more were left out. */
  private async rulesOf(m: Member, g: Pick<FullGVK, 'group' | 'kind'>): Promise<{ rules: RuleState[]; rows: TraceRow[] }> {
    const listed = (await m.view.reader.list<ResourceSyncRule>(RESOURCE_SYNC_RULES, call(m.signal))).items.filter(
      (r) => wellFormed(r) && isObject(r.spec) && isObject(r.spec.groupVersionKind) && r.spec.groupVersionKind.kind === g.kind && (r.spec.groupVersionKind.group ?? '') === g.group,
    );
    const rules = [...builtinRules(this.o.namespace), ...listed.slice(0, MAX_RULES_JUDGED).map((r) => ruleState(r.metadata.name ?? '', r.spec, r, this.o.namespace))].filter(
      (r) => r.compiled && r.sourceGVK.group === g.group && r.sourceGVK.kind === g.kind,
    );
    const rows = listed.length > MAX_RULES_JUDGED ? [unjudged(m, `it has ${listed.length} ResourceSyncRules of this kind: only the first ${MAX_RULES_JUDGED} were judged`)] : [];
    return { rules, rows };
  }

  /** How the member names `from`, and that member's own entry of itself, as the rules see a peer. */
  private fromOf(m: Member, from: Member): PeerRef {
    const fromName = speakerFor(m.view.clusters, from.id)?.metadata.name ?? from.name;
    return { id: from.id, name: fromName, ownCluster: () => from.view.clusters.find((c) => c.metadata.name === fromName) };
  }

  /** What the member's sync knows of the group when it reads a copy's source from `from`, as far as trace can tell. */
  private facts(m: Member, from: Member): OwnershipFacts {
    return {
      localClusterID: m.id,
      syncedFromClusterID: from.id,
      alivePeerIDs: m.alive,
      recordedSourceLive: () => true,
      peerReaches: (id) => id === from.id || registryReaches(from.view.clusters, id, -Infinity, Date.now()),
      ownerRegistered: (id) => m.view.clusters.some((c) => c.spec?.clusterID === id),
    };
  }

  /**
   * A member's copies of the source, as each of its rules that takes it judges them (a copy relayed
   * by another member, as read from there); adds where each goes to `places`.
   */
  private async judged(m: Member, origin: Origin, seeds: ReadonlySet<string>, places: Map<string, Spot>, members: ReadonlyMap<string, Member>): Promise<Ruled> {
    const { rules, rows } = await this.rulesOf(m, gvkOf(origin.object));
    const from = this.fromOf(m, origin.member);
    const facts = this.facts(m, origin.member);
    const other = m.view.otherController ? `; ${m.name} runs another controller: judged by what the copy holds, as ours would write it` : '';
    const judged: { rule: string; j: CopyJudgement; via?: string }[] = [];
    // The source's identities, and the copies of it members passed on: a copy of any is of the source.
    const known = new Set(seeds);
    for (const rule of rules) {
      if (await this.gated(rule, from, origin, m, rows)) continue;
      const source = await this.sourceAt(origin, rule.sourceGVK);
      let j = source && (await judgeCopy(m.view, rule, from, facts, source));
      if (!j) continue;
      let via: string | undefined;
      // Upstream's controller records no source of its own: what its copies carry says nothing of where it read them.
      if (j.reason === DECISION_REASONS.deliveredByAnotherSource && !m.view.otherController) {
        // Passed on by a member that holds a copy of the source: what its sync reads is that copy.
        const relay = await relayOf(j.current, rule.sourceGVK, members, seeds, this.relayReads);
        if (relay && 'unread' in relay) {
          rows.push({ member: m.name, seen: m.seen, object: objectLabel(j.current ?? origin.object), rule: rule.name, state: 'not judged', reason: `relayed by ${relay.unread.name}, whose copy could not be read: ${failureOf(relay.why, relay.unread, this.o.signal)}` });
          if (j.place && j.spot) places.set(j.place, j.spot);
          continue;
        }
        if (relay) known.add(asSource(relay.member.id, relay.object));
        const again = relay && (await judgeCopy(m.view, rule, this.fromOf(m, relay.member), this.facts(m, relay.member), relay.object));
        if (relay && again) [j, via] = [again, relay.member.name];
      }
      if (j.place && j.spot) places.set(j.place, j.spot);
      judged.push({ rule: rule.name, j, ...(via ? { via } : {}) });
    }
    for (const { rule, j, via } of ownJudgements(judged, known)) {
      const record = j.current && parseSyncRecord(j.current.metadata.annotations?.[ANNOTATIONS.syncRecord]);
      const written = j.current && lastWrite(j.current, FIELD_MANAGER);
      const drifted = j.update?.fields ?? [];
      rows.push({
        member: m.name,
        seen: m.seen,
        object: cut(j.current ? objectLabel(j.current) : j.copy, MAX_LABEL),
        rule: cut(rule, MAX_WORD),
        state: stateOf(j),
        reason: `${via ? `relayed by ${via} (its version and record are of ${via}'s copy): ` : ''}${j.reason}${other}`,
        ...(record ? { sourceVersion: cut(record.sourceVersion, MAX_VERSION) } : {}),
        ...(written ? { lastWrite: written } : {}),
        ...(drifted.length > 0 ? { drift: driftOf(drifted) } : {}),
        ...(j.diff ? { diff: cut(j.diff, MAX_DIFF) } : {}),
      });
    }
    return { rows };
  }

  /**
   * Whether `rule` is gated out by the ClusterFeatures the source's member advertises; a `no copy`
   * row names it when it would take the source otherwise.
   */
  private async gated(rule: RuleState, from: PeerRef, origin: Origin, m: Member, rows: TraceRow[]): Promise<boolean> {
    if (rule.ignoresFeatures || featuresSatisfied(rule.spec.clusterFeatureMatch, await this.features(origin))) return false;
    if (ruleTakes(rule, from, origin.object, m.id)) {
      rows.push({ member: m.name, seen: m.seen, object: '-', rule: rule.name, state: 'no copy', reason: `it takes it only from members that advertise the ClusterFeatures its clusterFeatureMatch names, and ${origin.member.name} does not` });
    }
    return true;
  }

  /**
   * Of a Secret source, whether a peer's rule takes it: matched only (its match reads no template),
   * never mutated; and the kinds its rules make of it, in the source's namespace, as where its copies
   * are looked for (a template may place them elsewhere: those are not looked for).
   */
  private async secretTaken(m: Member, origin: Origin | undefined): Promise<Ruled> {
    if (!origin) return { rows: [], taken: false, spots: [] };
    const { rules, rows } = await this.rulesOf(m, gvkOf(origin.object));
    const from = this.fromOf(m, origin.member);
    let taken = false;
    const spots: Spot[] = [];
    for (const rule of rules) {
      if (await this.gated(rule, from, origin, m, rows)) continue;
      if (!ruleTakes(rule, from, origin.object, m.id)) continue;
      taken = true;
      for (const gvk of rule.targetGVKs) spots.push({ gvk, namespace: origin.object.metadata.namespace });
    }
    return { rows, taken, spots };
  }

  /**
   * Objects of the member that may be copies of the source, found by the ownership label: of its
   * kind and of the kinds the member's rules make of it, in its namespace and wherever the member's
   * rules put its copies (and the object asked for, on the member trace runs on); at most
   * MAX_KINDS_LISTED kinds, MAX_NAMESPACES_LISTED namespaces and MAX_LISTED a list. `short` says
   * what was left out.
   */
  private async candidates(m: Member, origin: Origin | undefined, asked: KubeObject, seeds: ReadonlySet<string>, spots: readonly Spot[], mine: KubeObject | undefined): Promise<{ objects: KubeObject[]; short?: string }> {
    const source = origin?.object ?? asked;
    const owner = origin ? origin.member.id : ownerOf(asked);
    if (!owner || !isLabelValue(owner) || seeds.size === 0) return { objects: mine ? [mine] : [] };
    // By group and kind: a kind in two versions is the same objects.
    const kinds = new Map<string, FullGVK>([[`${gvkOf(source).group}/${gvkOf(source).kind}`, gvkOf(source)]]);
    const namespaces = new Set<string>([source.metadata.namespace ?? '', asked.metadata.namespace ?? '']);
    for (const { gvk, namespace } of spots) {
      if (!kinds.has(`${gvk.group}/${gvk.kind}`)) kinds.set(`${gvk.group}/${gvk.kind}`, gvk);
      namespaces.add(namespace ?? '');
    }
    const short: string[] = [];
    if (kinds.size > MAX_KINDS_LISTED) short.push(`its rules make ${kinds.size} kinds of it: copies were looked for in ${MAX_KINDS_LISTED}`);
    const inNamespaces = [...namespaces].filter(Boolean);
    if (inNamespaces.length > MAX_NAMESPACES_LISTED) short.push(`its rules put copies in ${inNamespaces.length} namespaces: copies were looked for in ${MAX_NAMESPACES_LISTED}`);
    const objects: KubeObject[] = mine ? [mine] : [];
    for (const gvk of [...kinds.values()].slice(0, MAX_KINDS_LISTED)) {
      const resource = await servedAs(m.view.discovery, gvk);
      if (!resource) continue;
      for (const ns of resource.namespaced ? inNamespaces.slice(0, MAX_NAMESPACES_LISTED) : [undefined]) {
        const list = await m.view.reader.list(resource, { ...call(m.signal), ...(ns ? { namespace: ns } : {}), labelSelector: `${LABELS.ownership}=${owner}`, limit: MAX_LISTED });
        const items: unknown[] = Array.isArray(list.items) ? list.items : [];
        if (items.length > MAX_LISTED || list.metadata?.continue) short.push(`more than ${MAX_LISTED} ${resource.resource}${ns ? ` in ${ns}` : ''} carry the source's owner: the first ${MAX_LISTED} were looked at`);
        // Only what is read of a copy found this way is kept: its metadata.
        objects.push(...items.slice(0, MAX_LISTED).filter((o): o is KubeObject => wellFormed(o) && o.metadata.uid !== mine?.metadata.uid).map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata })));
      }
    }
    return { objects, ...(short.length > 0 ? { short: `some copies may not have been found: ${short.join('; ')}` } : {}) };
  }

  /** The ClusterFeatures the source's member advertises, read once. */
  private features(origin: Origin): Promise<AdvertisedFeature[]> {
    let f = this.featuresOf.get(origin.member.id);
    if (!f) {
      f = origin.member.view.reader.list<ClusterFeature>(CLUSTER_FEATURES, call(origin.member.signal)).then((l) => l.items.filter(wellFormed).map(advertisedFeature));
      this.featuresOf.set(origin.member.id, f);
    }
    return f;
  }

  /** The source as a rule reads it: in the rule's version of its kind, read once a version; undefined when its member does not serve that version. */
  private sourceAt(origin: Origin, gvk: FullGVK): Promise<KubeObject | undefined> {
    if (gvk.version === origin.resource.version) return Promise.resolve(origin.object);
    const key = `${origin.member.id}|${gvkKey(gvk)}`;
    let read = this.sources.get(key);
    if (!read) {
      read = (async () => {
        let resource: ApiResource;
        try {
          resource = await origin.member.view.discovery.resourceFor(gvk);
        } catch (err) {
          if (err instanceof NoKindMatchError) return undefined;
          throw err;
        }
        const o: unknown = await origin.member.view.reader.getIfExists(resource, origin.object.metadata.namespace, origin.object.metadata.name ?? '', call(origin.member.signal));
        if (o !== undefined && !wellFormed(o)) throw new Error(`${origin.member.name} returned the source in ${gvk.version} in a shape no API server returns`);
        return o;
      })();
      this.sources.set(key, read);
    }
    return read;
  }
}

/** A member as far as following a copy's record reads it. */
type Readable = Pick<Member, 'id' | 'view' | 'signal'>;

/**
 * The member whose copy of the source `current` was read from, when its recorded source is a
 * member's copy (relayed): followed to the source (`seeds`) through each member at most once, and
 * read in the rule's version; undefined when it is not one, or cannot be read.
 */
export async function relayOf<M extends Readable>(
  current: KubeObject | undefined,
  gvk: FullGVK,
  members: ReadonlyMap<string, M>,
  seeds: ReadonlySet<string>,
  reads = new Map<string, Promise<unknown>>(),
): Promise<{ member: M; object: KubeObject } | { unread: M; why: string } | undefined> {
  let id = current && sourceIdentityOf(current);
  let first: { member: M; object: KubeObject } | undefined;
  const passed = new Set<string>();
  while (id && id.group === gvk.group && id.kind === gvk.kind && !passed.has(id.clusterID)) {
    passed.add(id.clusterID);
    const r = members.get(id.clusterID);
    if (!r) return undefined;
    let o: unknown;
    const at = { ...id, version: gvk.version };
    const key = JSON.stringify([id.clusterID, id.namespace, id.name]);
    const read =
      reads.get(key) ??
      reads
        .set(
          key,
          servedAs(r.view.discovery, at).then((served) => served && r.view.reader.getIfExists(served, id?.namespace || undefined, at.name, call(r.signal))),
        )
        .get(key)!;
    try {
      o = await read;
    } catch (err) {
      return { unread: r, why: errorMessage(err) };
    }
    // What a member returns is its word: only an object of the rule's kind is followed.
    if (!wellFormed(o) || gvkOf(o).group !== gvk.group || gvkOf(o).kind !== gvk.kind) return undefined;
    first ??= { member: r, object: o };
    id = sourceIdentityOf(o);
    if (id && seeds.has(sourceObjectKey(id))) return first;
  }
  return undefined;
}

/** Whether the member `id` runs another controller than ours, as its own entry of itself says. */
function otherController(clusters: readonly Cluster[], id: string): boolean {
  const own = speakerFor(clusters, id);
  return own !== undefined && !runsOurs(own);
}

/** The resource serving a kind on a member: in the version given when served, else its preferred one; undefined when not served. */
async function servedAs(discovery: MemberView['discovery'], gvk: Pick<FullGVK, 'group' | 'kind'> & { version?: string }): Promise<ApiResource | undefined> {
  const all = await discovery.all();
  return all.find((r) => r.group === gvk.group && r.kind === gvk.kind && r.version === gvk.version) ?? all.find((r) => r.group === gvk.group && r.kind === gvk.kind);
}
