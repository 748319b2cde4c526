// The invariants the chaos harness holds the group to, judged from its own model and from what
// the API servers hold and saw, never from what the controllers say:
// - every live eligible source has exactly one copy on each other member, with the source's data
//   and selecting labels and naming the source's member as owner, and nothing else of the run exists anywhere (a copy
//   of a deleted or no longer selected source is gone): reached within a bounded time after the
//   faults healed, or it is a violation;
// - no source is lost or changed by anyone but the harness;
// - no copy verified up to date is deleted while its source stays live and selected (a wrongful
//   deletion), whatever faults happen meanwhile;
// - once converged, nobody writes any object again (no ping-pong; a new copy's one move of its
//   fields into our apply entry, or a hand-over between its sources, aside), and the writes a round caused
//   per object stay within a small multiple of the changes the harness made to it.
import { ANNOTATIONS } from '../../src/core/api/keys.ts';
import { SECRETS, type Secret } from '../../src/core/api/resources.ts';
import type { RestClient } from '../../src/kube/index.ts';
import { OWNER } from '../support/sync-helpers.ts';
import { sleep } from '../../src/kube/index.ts';
import { GATED_LABEL, PLAIN_LABEL, type Model, type Source } from './model.ts';

export type ViolationKind = 'not-converged' | 'lost-object' | 'wrongful-deletion' | 'written-after-settling' | 'writes-unbounded';

export interface Violation {
  readonly kind: ViolationKind;
  readonly round: number;
  readonly detail: string;
}

const key = (member: string, name: string): string => `${member}/${name}`;

/**
 * Classifies the deletions the observers see as they happen: the harness withdraws an object's
 * protection before it deletes it (or makes its source unselected), so a deletion of anything
 * still protected was made by someone else, wrongly.
 */
export class Ledger {
  readonly violations: Violation[] = [];
  lostObjects = 0;
  wrongfulDeletions = 0;
  round = 0;
  /** Copies verified up to date whose source has stayed live and selected since. */
  private readonly protectedCopies = new Set<string>();

  private readonly model: Model;

  constructor(model: Model) {
    this.model = model;
  }

  readonly onDelete = (member: string, name: string): void => {
    const s = this.model.sources.get(name);
    if (s && s.origin === member) {
      if (!s.live) return;
      this.lostObjects++;
      this.violations.push({ kind: 'lost-object', round: this.round, detail: `source ${name} deleted on ${member} by someone other than the harness` });
      return;
    }
    if (this.protectedCopies.delete(key(member, name))) {
      this.wrongfulDeletions++;
      this.violations.push({ kind: 'wrongful-deletion', round: this.round, detail: `the copy of ${name} (live and selected on ${s?.origin ?? '?'}) deleted on ${member}` });
    }
  };

  /** The harness is about to delete this copy itself. */
  release(member: string, name: string): void {
    this.protectedCopies.delete(key(member, name));
  }

  /** The harness is about to delete the source or stop its selection: its copies may go. */
  releaseAll(name: string): void {
    for (const m of this.model.members) this.protectedCopies.delete(key(m, name));
  }

  /** After a converged check: every copy it saw up to date is protected from now on. */
  protectVerified(): void {
    for (const s of this.model.live()) {
      if (!this.model.eligible(s)) continue;
      for (const m of this.model.members) if (m !== s.origin) this.protectedCopies.add(key(m, s.name));
    }
  }
}

/** What every member holds of the run, by member then name (undefined: that member could not be listed). */
type Snapshot = Map<string, Map<string, Secret> | undefined>;

export interface CheckContext {
  readonly model: Model;
  readonly clients: ReadonlyMap<string, RestClient>;
  /** Each member's cluster ID, which copies name as their owner. */
  readonly clusterIDs: ReadonlyMap<string, string>;
  readonly namespace: string;
  readonly labelSelector: string;
}

async function snapshot(ctx: CheckContext): Promise<Snapshot> {
  const snap: Snapshot = new Map();
  await Promise.all(
    ctx.model.members.map(async (m) => {
      const list = await ctx.clients
        .get(m)!
        .list<Secret>(SECRETS, { namespace: ctx.namespace, labelSelector: ctx.labelSelector, timeoutMs: 10_000 })
        .catch(() => undefined);
      snap.set(m, list ? new Map(list.items.map((s) => [s.metadata.name ?? '', s])) : undefined);
    }),
  );
  return snap;
}

/** The cluster ID of the source a copy records (where it was read from). */
function recordedPeer(s: Secret): string | undefined {
  const record = s.metadata.annotations?.[ANNOTATIONS.source];
  try {
    return record ? (JSON.parse(record) as { clusterID?: string }).clusterID : undefined;
  } catch {
    return undefined;
  }
}

const dataOf = (s: Secret): string => Buffer.from(s.data?.['v'] ?? '', 'base64').toString();

/** Everything the snapshot shows out of line with the model, and how many (source, member) pairs it looked at. */
function judge(ctx: CheckContext, snap: Snapshot): { problems: string[]; checked: number } {
  const problems: string[] = [];
  let checked = 0;
  const expected = new Map<string, Source>();
  for (const s of ctx.model.live()) {
    for (const m of ctx.model.holders(s)) {
      expected.set(key(m, s.name), s);
      checked++;
      const held = snap.get(m);
      if (!held) {
        problems.push(`${m} could not be listed`);
        continue;
      }
      const obj = held.get(s.name);
      if (!obj) {
        problems.push(m === s.origin ? `source ${s.name} missing on ${m}` : `no copy of ${s.origin}'s ${s.name} on ${m}`);
        continue;
      }
      if (dataOf(obj) !== s.data) problems.push(`${m}'s ${s.name} holds ${JSON.stringify(dataOf(obj))}, the source ${JSON.stringify(s.data)}`);
      const selection = (obj.metadata.labels?.[PLAIN_LABEL] === 'yes') === s.plain && (obj.metadata.labels?.[GATED_LABEL] === 'yes') === s.gated;
      if (!selection) problems.push(`${m}'s ${s.name} has labels ${JSON.stringify(obj.metadata.labels ?? {})}, the source${s.plain ? ' plain' : ''}${s.gated ? ' gated' : ''}`);
      const owner = obj.metadata.annotations?.[OWNER];
      if (m !== s.origin && owner !== ctx.clusterIDs.get(s.origin)) problems.push(`${m}'s copy of ${s.name} names owner ${owner ?? 'none'}, not ${s.origin}`);
      // Read from its owner or passed on by another member (taken while the owner was away, kept
      // until the source next changes), never from itself or from outside the group.
      const from = recordedPeer(obj);
      if (m !== s.origin && (from === ctx.clusterIDs.get(m) || ![...ctx.clusterIDs.values()].includes(from ?? ''))) problems.push(`${m}'s copy of ${s.name} records source cluster ${from ?? 'none'}`);
      if (m === s.origin && owner !== undefined) problems.push(`source ${s.name} on ${m} carries an owner annotation`);
    }
  }
  for (const [m, held] of snap) {
    for (const name of held?.keys() ?? []) {
      if (expected.has(key(m, name))) continue;
      checked++;
      const s = ctx.model.sources.get(name);
      problems.push(`${m} still holds ${name} (${s ? (s.live ? 'source not selected' : 'source deleted') : 'unknown to the harness'})`);
    }
  }
  return { problems, checked };
}

export interface Convergence {
  readonly converged: boolean;
  /** What was still out of line at the deadline (empty when converged). */
  readonly problems: readonly string[];
  readonly checked: number;
  readonly ms: number;
  /** What was still out of line after SLOW_MS, when convergence took longer (to see what is slow). */
  readonly slow: readonly string[];
  /** member/name -> everything held once converged. */
  readonly held: ReadonlyMap<string, Secret>;
}

/** How often the group's state is read while waiting for it to converge. */
const POLL_MS = 250;
const SLOW_MS = 5000;

/** Reads the group until it is what the model says, or `timeoutMs` passes. */
export async function awaitConvergence(ctx: CheckContext, timeoutMs: number): Promise<Convergence> {
  const started = performance.now();
  let slow: readonly string[] = [];
  for (;;) {
    const snap = await snapshot(ctx);
    const { problems, checked } = judge(ctx, snap);
    const ms = performance.now() - started;
    if (problems.length === 0) return { converged: true, problems, checked, ms, slow, held: heldOf(snap) };
    if (ms > timeoutMs) return { converged: false, problems, checked, ms, slow, held: new Map() };
    if (ms > SLOW_MS && slow.length === 0) slow = problems;
    await sleep(POLL_MS);
  }
}

function heldOf(snap: Snapshot): Map<string, Secret> {
  const held = new Map<string, Secret>();
  for (const [m, objs] of snap) for (const [name, s] of objs ?? []) held.set(key(m, name), s);
  return held;
}

type FieldsEntry = { manager?: string; operation?: string };
const entries = (s: Secret): FieldsEntry[] => (s.metadata.managedFields ?? []) as FieldsEntry[];
/** What a copy holds: anything but its bookkeeping (version, managed fields, the source and the sync record it carries). */
const content = (s: Secret): string => {
  const { [ANNOTATIONS.source]: _, [ANNOTATIONS.syncRecord]: _record, ...annotations } = s.metadata.annotations ?? {};
  return JSON.stringify([s.data, s.metadata.labels, annotations, s.type]);
};

/**
 * Writes that changed a copy's bookkeeping only: our first apply to a copy after its creation
 * moves our fields from the entry the create left (an Update) into our apply entry, and a copy
 * handed from one of its sources to another (and back, once the first is back) records the new
 * one. They may come late to a converged group, as members notice a fault's end after the
 * harness does; they never change what the copy holds, and the round's write bound counts them.
 */
function bookkeepingOnly(before: Secret, after: Secret): boolean {
  return content(before) === content(after);
}

export interface Settling {
  /** What was written (or came or went) that a settled group must not write. */
  readonly violations: readonly string[];
  /** Copies whose bookkeeping alone changed (see bookkeepingOnly). */
  readonly bookkeeping: number;
}

/** What was written (or came or went) since `held` was read. */
export async function writtenSince(ctx: CheckContext, held: ReadonlyMap<string, Secret>): Promise<Settling> {
  const now = heldOf(await snapshot(ctx));
  const changed: string[] = [];
  let bookkeeping = 0;
  for (const [k, obj] of now) {
    const before = held.get(k);
    if (before?.metadata.resourceVersion === obj.metadata.resourceVersion) continue;
    if (before && bookkeepingOnly(before, obj)) {
      bookkeeping++;
      continue;
    }
    const what = ` (now ${dataOf(obj)}, labels ${JSON.stringify(obj.metadata.labels)}, source ${obj.metadata.annotations?.[ANNOTATIONS.source] ?? 'none'}, fields ${entries(obj).map((e) => `${e.manager ?? ''}/${e.operation ?? ''}`).join(',')})`;
    changed.push(`${k} ${before ? 'written' : 'appeared'}${what}`);
  }
  for (const k of held.keys()) if (!now.has(k)) changed.push(`${k} deleted`);
  return { violations: changed, bookkeeping };
}
