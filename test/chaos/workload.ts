// What users do to the group while faults happen: create, change, relabel and delete Secrets on
// the members, and meddle with copies (change one, delete one). Every write to a source goes to
// its own member's API server while that one is up (the engine sees to it), and is retried until
// it is known to have happened, so the model is always what the API server holds.
import { SECRETS } from '../../src/core/api/resources.ts';
import { isAlreadyExists, isNotFound, type RestClient } from '../../src/kube/index.ts';
import { eventually } from '../support/eventually.ts';
import { secret } from '../support/sync-helpers.ts';
import type { Ledger } from './invariants.ts';
import { GATED_LABEL, PLAIN_LABEL, labelsOf, type Model, type Source } from './model.ts';
import type { Random } from './random.ts';

/** A write to a member that may be down or paused gives up after this long (its outcome then does not matter). */
const MEDDLE_TIMEOUT_MS = 5000;

export type WorkloadOp = 'create' | 'update' | 'relabel' | 'delete' | 'delete-copy' | 'edit-copy';

const OP_WEIGHTS: Readonly<Record<WorkloadOp, number>> = { create: 4, update: 4, relabel: 2, delete: 2, 'delete-copy': 1, 'edit-copy': 1 };
/** Past this many live sources a member makes no more, so a long run's checks stay as cheap as its first. */
const MAX_SOURCES_PER_MEMBER = 8;

export interface WorkloadDeps {
  readonly model: Model;
  readonly ledger: Ledger;
  readonly clients: ReadonlyMap<string, RestClient>;
  readonly namespace: string;
  /** The run's label value. */
  readonly run: string;
  /** Whether a member's API server is up for meddling with its copies. */
  readonly reachable: (member: string) => boolean;
}

export class Workload {
  /** Harness writes this round: to each source (by name), and to each copy (by member/name). */
  sourceWrites = new Map<string, number>();
  copyWrites = new Map<string, number>();
  private version = 0;

  private readonly o: WorkloadDeps;

  constructor(deps: WorkloadDeps) {
    this.o = deps;
  }

  /** Starts counting the harness's writes afresh (at the start of a round). */
  newRound(): void {
    this.sourceWrites = new Map();
    this.copyWrites = new Map();
  }

  /** One user action whose source write goes to `member` (which must be up), chosen by `rng`. */
  async step(member: string, rng: Random): Promise<string> {
    const mine = this.o.model.live().filter((s) => s.origin === member);
    const op = mine.length === 0 ? 'create' : rng.weighted(mine.length >= MAX_SOURCES_PER_MEMBER ? { ...OP_WEIGHTS, create: 0 } : OP_WEIGHTS);
    if (op === 'create') return this.create(member, rng);
    const s = rng.pick(mine);
    switch (op) {
      case 'update':
        await this.update(s);
        return `changed ${s.name} on ${member}`;
      case 'relabel':
        return this.relabel(s, rng);
      case 'delete':
        return this.remove(s);
      case 'delete-copy':
      case 'edit-copy': {
        const other = rng.pick(this.o.model.members.filter((m) => m !== member));
        await (op === 'delete-copy' ? this.deleteCopy(s, other) : this.editCopy(s, other));
        return `${op === 'delete-copy' ? 'deleted' : 'changed'} ${other}'s copy of ${s.name}`;
      }
    }
  }

  /** A live source of `member` some rule selects (made first if there is none). */
  async selectedSource(member: string, rng: Random): Promise<Source> {
    const found = this.o.model.live().filter((s) => s.origin === member && this.o.model.eligible(s));
    if (found.length > 0) return rng.pick(found);
    await this.create(member, rng, true);
    return this.selectedSource(member, rng);
  }

  async create(member: string, rng: Random, plain = rng.chance(0.7)): Promise<string> {
    const s: Source = { name: this.o.model.freshName(), origin: member, data: this.nextValue(), plain, gated: rng.chance(0.5), live: true };
    this.o.model.sources.set(s.name, s);
    await this.sourceWrite(s, (rest) =>
      rest.create(SECRETS, this.o.namespace, secret(this.o.namespace, s.name, { v: s.data }, { labels: labelsOf(this.o.run, s) })).catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err;
      }),
    );
    return `created ${s.name} on ${member} (${s.plain ? 'plain' : ''}${s.gated ? ' gated' : ''})`;
  }

  async update(s: Source): Promise<void> {
    s.data = this.nextValue();
    await this.sourceWrite(s, (rest) => rest.patch(SECRETS, this.o.namespace, s.name, 'merge', { data: { v: Buffer.from(s.data).toString('base64') } }));
  }

  private async relabel(s: Source, rng: Random): Promise<string> {
    const wasEligible = this.o.model.eligible(s);
    s.plain = rng.chance(0.5);
    s.gated = rng.chance(0.5);
    if (wasEligible && !this.o.model.eligible(s)) this.o.ledger.releaseAll(s.name);
    // A merge patch sets what is selected and removes what is not (null deletes a label).
    const labels = { ...labelsOf(this.o.run, s), [PLAIN_LABEL]: s.plain ? 'yes' : null, [GATED_LABEL]: s.gated ? 'yes' : null };
    await this.sourceWrite(s, (rest) => rest.patch(SECRETS, this.o.namespace, s.name, 'merge', { metadata: { labels } }));
    return `relabelled ${s.name} on ${s.origin} (${s.plain ? 'plain' : ''}${s.gated ? ' gated' : ''})`;
  }

  private async remove(s: Source): Promise<string> {
    s.live = false;
    this.o.ledger.releaseAll(s.name);
    await this.sourceWrite(s, (rest) =>
      rest.delete(SECRETS, this.o.namespace, s.name).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      }),
    );
    return `deleted ${s.name} on ${s.origin}`;
  }

  /** Someone deletes a copy: it must come back. */
  async deleteCopy(s: Source, member: string): Promise<void> {
    if (!this.o.reachable(member)) return;
    this.o.ledger.release(member, s.name);
    this.countCopyWrite(member, s.name);
    await this.o.clients.get(member)!.delete(SECRETS, this.o.namespace, s.name, { timeoutMs: MEDDLE_TIMEOUT_MS }).catch(() => undefined);
  }

  /** Someone changes a copy: it must be put back. */
  async editCopy(s: Source, member: string): Promise<void> {
    if (!this.o.reachable(member)) return;
    this.countCopyWrite(member, s.name);
    await this.o.clients
      .get(member)!
      .patch(SECRETS, this.o.namespace, s.name, 'merge', { data: { v: Buffer.from(`meddled-${this.nextValue()}`).toString('base64') } }, { timeoutMs: MEDDLE_TIMEOUT_MS })
      .catch(() => undefined);
  }

  private countCopyWrite(member: string, name: string): void {
    const k = `${member}/${name}`;
    this.copyWrites.set(k, (this.copyWrites.get(k) ?? 0) + 1);
  }

  private nextValue(): string {
    return `v${this.version++}`;
  }

  /** The write to a source on its member, retried until it is known to have happened (each is idempotent). */
  private async sourceWrite(s: Source, write: (rest: RestClient) => Promise<unknown>): Promise<void> {
    this.sourceWrites.set(s.name, (this.sourceWrites.get(s.name) ?? 0) + 1);
    const rest = this.o.clients.get(s.origin)!;
    await eventually(`a write to ${s.name} on ${s.origin}`, () => write(rest).then(() => true), 60_000);
  }
}
