// Whether a namespace holds nothing but what is about to go: asked before deleting a namespace
// that was made for something else (deleting a namespace deletes everything in it, whoever put
// it there). Every namespaced kind the server serves is listed (metadata only, one short page
// each); what Kubernetes itself makes in every namespace does not count, nor do the objects
// given and whatever they own (their dependents go with them). A kind this client may not list
// (forbidden, or not listable after all) counts as holding something: unsure means keep. A list
// that fails for a while (a server busy or away) throws: the question is asked again later.
import type { ApiResource, Discovery } from './discovery.ts';
import { ApiError, isForbidden, isNotFound } from './errors.ts';
import type { ObjectReader } from './rest.ts';
import type { KubeObject } from './types.ts';

export type NamespaceContents = { readonly only: true } | { readonly only: false; readonly why: string };

/** One kind of the namespace as listed: its first page, and whether there was more. */
export type Listing = { readonly resource: string; readonly items: readonly KubeObject[]; readonly more: boolean } | { readonly resource: string; readonly error: string };

/** Kinds never looked at: Events are written about everything, and go by themselves. */
const SKIPPED = new Set(['events', 'events.events.k8s.io']);
/** What Kubernetes makes in every namespace, by resource and name. */
const KUBERNETES_MADE: ReadonlyMap<string, string> = new Map([
  ['serviceaccounts', 'default'],
  ['configmaps', 'kube-root-ca.crt'],
]);
/** Items read per page, and pages at most per kind (read on only while all of a kind is going). */
const PAGE = 100;
const MAX_PAGES = 10;
/** Lists in flight at once. */
const PARALLEL = 4;
const METADATA_ONLY = 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json';

function resourceName(r: Pick<ApiResource, 'group' | 'resource'>): string {
  return r.group ? `${r.resource}.${r.group}` : r.resource;
}

/** The namespaced kinds to look at: listable, once per group and resource (the first version served), Events left out. */
export function kindsToList(all: readonly ApiResource[]): ApiResource[] {
  const seen = new Set<string>();
  return all.filter((r) => {
    const name = resourceName(r);
    if (!r.namespaced || !r.verbs.includes('list') || SKIPPED.has(name) || seen.has(name)) return false;
    seen.add(name);
    return true;
  });
}

/**
 * The verdict on a namespace from its listings: `except` and what they own (transitively) may be
 * there, what `going` says goes by itself, and what Kubernetes makes everywhere.
 */
export function holdsOnly(listings: readonly Listing[], except: readonly KubeObject[], going: (o: KubeObject) => boolean = () => false): NamespaceContents {
  const failed = listings.find((l) => 'error' in l);
  if (failed && 'error' in failed) return { only: false, why: `its ${failed.resource} could not be listed (${failed.error})` };
  const listed = listings.filter((l) => !('error' in l)) as Extract<Listing, { items: unknown }>[];
  const gone = new Set(except.map((o) => o.metadata.uid).filter((u): u is string => !!u));
  for (let grew = true; grew; ) {
    grew = false;
    for (const o of listed.flatMap((l) => l.items)) {
      const uid = o.metadata.uid;
      if (uid && !gone.has(uid) && (going(o) || (o.metadata.ownerReferences ?? []).some((r) => gone.has(r.uid)))) {
        gone.add(uid);
        grew = true;
      }
    }
  }
  for (const l of listed) {
    const other = l.items.find((o) => !gone.has(o.metadata.uid ?? '') && KUBERNETES_MADE.get(l.resource) !== o.metadata.name);
    if (other) return { only: false, why: `it holds ${l.resource} ${other.metadata.name ?? ''}` };
    if (l.more) return { only: false, why: `it holds more ${l.resource} than were looked at` };
  }
  return { only: true };
}

/** Whether `namespace` holds only `except` (and what they own) besides what Kubernetes makes in every namespace. */
export async function namespaceHoldsOnly(rest: ObjectReader, discovery: Discovery, namespace: string, except: readonly KubeObject[], signal?: AbortSignal, going?: (o: KubeObject) => boolean): Promise<NamespaceContents> {
  // A kind installed since the last look is looked at too.
  await discovery.refresh();
  const kinds = kindsToList(await discovery.all());
  const listings: Listing[] = [];
  for (let i = 0; i < kinds.length; i += PARALLEL) {
    listings.push(
      ...(await Promise.all(
        kinds.slice(i, i + PARALLEL).map(async (r): Promise<Listing> => {
          const resource = resourceName(r);
          const items: KubeObject[] = [];
          let cont: string | undefined;
          try {
            for (let pages = 0; pages < MAX_PAGES; pages++) {
              const page = await rest.list(r, { namespace, limit: PAGE, accept: METADATA_ONLY, ...(cont ? { continue: cont } : {}), ...(signal ? { signal } : {}) });
              items.push(...(page.items ?? []));
              cont = page.metadata?.continue || undefined;
              // Another page matters only while everything so far goes with the namespace.
              if (!cont || !items.every((o) => going?.(o) ?? false)) break;
            }
            return { resource, items, more: cont !== undefined };
          } catch (err) {
            if (signal?.aborted || !(isForbidden(err) || isNotFound(err) || (err instanceof ApiError && err.code === 405))) throw err;
            return { resource, error: `${(err as ApiError).code} ${(err as ApiError).reason ?? ''}`.trim() };
          }
        }),
      )),
    );
    // A kind that cannot be listed decides it: the rest need not be asked.
    if (listings.some((l) => 'error' in l)) break;
  }
  return holdsOnly(listings, except, going);
}
