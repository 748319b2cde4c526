// Discovery and REST mapping: which resource serves a kind, whether it is namespaced, and its
// verbs, read from the server (aggregated discovery when available, else /api + /apis per group
// version), never guessed from English plurals. The map is cached and refreshed when asked for a
// kind it does not know, so a CRD installed later is found; a miss is remembered briefly so a loop
// asking for a missing kind does not hammer the server.
import { isNotFound } from './errors.ts';
import type { ObjectReader } from './rest.ts';
import type { GroupVersionKind, ResourceRef } from './types.ts';
import { apiVersionOf } from './types.ts';

export interface ApiResource extends ResourceRef {
  kind: string;
  namespaced: boolean;
  verbs: string[];
  /** e.g. `status`, `scale`. */
  subresources: string[];
  /** e.g. `cm` for configmaps, as kubectl takes them. */
  shortNames?: string[];
}

export class NoKindMatchError extends Error {
  override readonly name = 'NoKindMatchError';
}

const AGGREGATED_ACCEPT = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

interface AggregatedList {
  kind?: string;
  items?: {
    metadata?: { name?: string };
    versions?: {
      version: string;
      resources?: { resource: string; responseKind?: { kind?: string }; scope?: string; verbs?: string[]; shortNames?: string[]; subresources?: { subresource: string }[] }[];
    }[];
  }[];
}

interface ApiResourceList {
  resources?: { name: string; kind: string; namespaced: boolean; verbs?: string[]; shortNames?: string[] }[];
}

/** Of a server without aggregated discovery: group versions read, and read at once. Far above a real cluster's. */
export const MAX_LEGACY_GROUP_VERSIONS = 1_000;
const LEGACY_READS_AT_ONCE = 8;

export class Discovery {
  private readonly rest: ObjectReader;
  private readonly missTtlMs: number;
  private readonly signal: AbortSignal | undefined;
  private resources: ApiResource[] = [];
  private refreshedAt = -Infinity;
  private inflight: Promise<void> | undefined;

  /** `signal` ends every read of it (a command's, say). */
  constructor(rest: ObjectReader, opts: { missTtlMs?: number; signal?: AbortSignal } = {}) {
    this.rest = rest;
    this.missTtlMs = opts.missTtlMs ?? 3_000;
    this.signal = opts.signal;
  }

  /** The resource serving a kind; refreshes once if unknown, then throws NoKindMatchError. */
  async resourceFor(gvk: GroupVersionKind): Promise<ApiResource> {
    const match = (): ApiResource | undefined =>
      this.resources.find((r) => r.group === gvk.group && r.version === gvk.version && r.kind === gvk.kind);
    let found = match();
    if (!found && performance.now() - this.refreshedAt >= this.missTtlMs) {
      await this.refresh();
      found = match();
    }
    if (!found) throw new NoKindMatchError(`no resource for kind ${gvk.kind} in ${apiVersionOf(gvk)}`);
    return found;
  }

  /** Kind and scope of a resource; refreshes once if unknown. */
  async describe(ref: ResourceRef): Promise<ApiResource> {
    const match = (): ApiResource | undefined =>
      this.resources.find((r) => r.group === ref.group && r.version === ref.version && r.resource === ref.resource);
    let found = match();
    if (!found && performance.now() - this.refreshedAt >= this.missTtlMs) {
      await this.refresh();
      found = match();
    }
    if (!found) throw new NoKindMatchError(`no resource ${ref.resource} in ${apiVersionOf(ref)}`);
    return found;
  }

  /** Everything the server serves, as of the last refresh. */
  async all(): Promise<ApiResource[]> {
    if (this.refreshedAt === -Infinity) await this.refresh();
    return this.resources;
  }

  /** Re-reads discovery; concurrent callers share one refresh. */
  refresh(): Promise<void> {
    this.inflight ??= this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async load(): Promise<void> {
    const [core, groups] = await Promise.all([this.loadRoot('/api', ''), this.loadRoot('/apis', undefined)]);
    this.resources = [...core, ...groups];
    this.refreshedAt = performance.now();
  }

  private async loadRoot(root: '/api' | '/apis', coreGroup: string | undefined): Promise<ApiResource[]> {
    const call = this.signal ? { signal: this.signal } : {};
    const doc = await this.rest.getJson<AggregatedList & { versions?: string[]; groups?: { name: string; versions: { version: string }[] }[] }>(root, { ...call, accept: AGGREGATED_ACCEPT });
    if (doc.kind === 'APIGroupDiscoveryList') return fromAggregated(doc, coreGroup);
    // Legacy discovery: one request per group version.
    const gvs = root === '/api' ? (doc.versions ?? []).map((version) => ({ group: '', version })) : (doc.groups ?? []).flatMap((g) => g.versions.map((v) => ({ group: g.name, version: v.version })));
    // A server decides how many group versions it lists: read a few at a time, and not past a bound.
    if (gvs.length > MAX_LEGACY_GROUP_VERSIONS) throw new Error(`the server lists ${gvs.length} group versions under ${root}: more than the ${MAX_LEGACY_GROUP_VERSIONS} discovery reads`);
    const lists: ApiResource[][] = [];
    for (let i = 0; i < gvs.length; i += LEGACY_READS_AT_ONCE) {
      lists.push(
        ...(await Promise.all(
          gvs.slice(i, i + LEGACY_READS_AT_ONCE).map(async (gv) => {
            try {
              const list = await this.rest.getJson<ApiResourceList>(gv.group ? `/apis/${gv.group}/${gv.version}` : `/api/${gv.version}`, call);
              return fromLegacy(gv, list);
            } catch (err) {
              // A group version can vanish between the two requests (a CRD being deleted).
              if (isNotFound(err)) return [];
              throw err;
            }
          }),
        )),
      );
    }
    return lists.flat();
  }
}

function fromAggregated(doc: AggregatedList, coreGroup: string | undefined): ApiResource[] {
  const out: ApiResource[] = [];
  for (const g of doc.items ?? []) {
    const group = coreGroup ?? g.metadata?.name ?? '';
    for (const v of g.versions ?? []) {
      for (const r of v.resources ?? []) {
        if (!r.responseKind?.kind) continue;
        out.push({
          group,
          version: v.version,
          resource: r.resource,
          kind: r.responseKind.kind,
          namespaced: r.scope === 'Namespaced',
          verbs: r.verbs ?? [],
          subresources: (r.subresources ?? []).map((s) => s.subresource),
          ...(r.shortNames?.length ? { shortNames: r.shortNames } : {}),
        });
      }
    }
  }
  return out;
}

function fromLegacy(gv: { group: string; version: string }, list: ApiResourceList): ApiResource[] {
  const byName = new Map<string, ApiResource>();
  const resources = list.resources ?? [];
  for (const r of resources) {
    if (!r.name.includes('/')) byName.set(r.name, { ...gv, resource: r.name, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs ?? [], subresources: [], ...(r.shortNames?.length ? { shortNames: r.shortNames } : {}) });
  }
  for (const r of resources) {
    const [parent, sub] = r.name.split('/', 2);
    if (sub) byName.get(parent!)?.subresources.push(sub);
  }
  return [...byName.values()];
}
