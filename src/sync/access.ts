// Permission pre-checks with SelfSubjectAccessReviews, the one kind of request the controller sends
// to peers that is not a read: may we read the rule's kind there, and write what it makes here?
// Resource names come from discovery (never from English plurals), and a rule scoped to some
// namespaces is checked in those namespaces only, so a reader allowed Secrets in one namespace
// passes for a rule that only reads that namespace.
import type { AccessReviewer, ApiResource } from '../kube/index.ts';

/** Every verb on the resource in every namespace (or cluster-wide when `namespaces` is undefined); the first denial, or undefined. */
export async function firstDenied(rest: AccessReviewer, resource: ApiResource, verbs: readonly string[], namespaces: readonly string[] | undefined, signal: AbortSignal): Promise<string | undefined> {
  const scopes = resource.namespaced && namespaces ? namespaces : [undefined];
  for (const namespace of scopes) {
    for (const verb of verbs) {
      const review = await rest.reviewAccess({ group: resource.group, version: resource.version, resource: resource.resource, verb, ...(namespace ? { namespace } : {}) }, { signal });
      if (!review.allowed) {
        const what = `${verb} ${resource.group ? `${resource.resource}.${resource.group}` : resource.resource}`;
        return namespace ? `${what} in namespace ${namespace}` : `${what} cluster-wide`;
      }
    }
  }
  return undefined;
}
