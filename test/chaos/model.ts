// What the harness made, kept independently of the controllers: every Secret it created on which
// member, what it holds, which rules its labels select, and whether it was deleted. From this
// alone the checker knows which copies must exist where and with what data.

/** Every Secret the harness makes carries it; the observers watch by it. */
export const RUN_LABEL = 'chaos-run';
/** Selected by the plain rule, which copies from every member. */
export const PLAIN_LABEL = 'chaos-plain';
/** Selected by the gated rule, which copies only from members advertising FEATURE. */
export const GATED_LABEL = 'chaos-gated';
export const FEATURE = 'chaos-source';

export interface Source {
  readonly name: string;
  /** The member it was made on. */
  readonly origin: string;
  data: string;
  plain: boolean;
  gated: boolean;
  live: boolean;
}

export class Model {
  readonly sources = new Map<string, Source>();
  private next = 0;

  readonly members: readonly string[];
  /** Members advertising FEATURE. */
  readonly featured: ReadonlySet<string>;

  constructor(members: readonly string[], featured: ReadonlySet<string>) {
    this.members = members;
    this.featured = featured;
  }

  /** A name never used before in this run: a deleted source's name never comes back. */
  freshName(): string {
    return `chaos-${(this.next++).toString(36).padStart(4, '0')}`;
  }

  /** Some rule copies it from its member. */
  eligible(s: Source): boolean {
    return s.live && (s.plain || (s.gated && this.featured.has(s.origin)));
  }

  live(): Source[] {
    return [...this.sources.values()].filter((s) => s.live);
  }

  /** The members that must hold `s` (its own member included while it lives), by name. */
  holders(s: Source): string[] {
    if (!s.live) return [];
    return this.eligible(s) ? [...this.members] : [s.origin];
  }
}

export function labelsOf(run: string, s: Pick<Source, 'plain' | 'gated'>): Record<string, string> {
  return { [RUN_LABEL]: run, ...(s.plain ? { [PLAIN_LABEL]: 'yes' } : {}), ...(s.gated ? { [GATED_LABEL]: 'yes' } : {}) };
}
