// apiVersion/kind <-> GroupVersionKind, with the core group as the empty string.

import type { GroupVersionKind, KubeObject } from './types.ts';

/** A GVK with every field present, as compared by upstream (struct equality). */
export interface FullGVK {
  group: string;
  version: string;
  kind: string;
}

export function parseApiVersion(apiVersion: string | undefined): { group: string; version: string } {
  const v = apiVersion ?? '';
  const slash = v.indexOf('/');
  return slash < 0 ? { group: '', version: v } : { group: v.slice(0, slash), version: v.slice(slash + 1) };
}

export function formatApiVersion(gvk: GroupVersionKind): string {
  const version = gvk.version ?? '';
  return gvk.group ? `${gvk.group}/${version}` : version;
}

export function gvkOf(obj: KubeObject): FullGVK {
  return { ...parseApiVersion(obj.apiVersion), kind: obj.kind ?? '' };
}

export function fullGVK(gvk: GroupVersionKind): FullGVK {
  return { group: gvk.group ?? '', version: gvk.version ?? '', kind: gvk.kind ?? '' };
}

/** `group/version/kind`: a kind as a map key. */
export function gvkKey(g: FullGVK): string {
  return `${g.group}/${g.version}/${g.kind}`;
}

export function sameGVK(a: GroupVersionKind, b: GroupVersionKind): boolean {
  return (a.group ?? '') === (b.group ?? '') && (a.version ?? '') === (b.version ?? '') && (a.kind ?? '') === (b.kind ?? '');
}

/** `<Kind>.<group>/<version>`, the format of ANNOTATIONS.originalGVK (core group: `Secret./v1`). */
export function formatOriginalGVK(gvk: GroupVersionKind): string {
  return `${gvk.kind ?? ''}.${gvk.group ?? ''}/${gvk.version ?? ''}`;
}
