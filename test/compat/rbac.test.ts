// deploy/manifests' RBAC against upstream's, as upstream's Helm chart renders it: upstream's code
// has no RBAC markers, so the chart is the only statement of what its controller and its reader
// need. Every permission upstream grants must be granted by ours too, or be listed below as a
// deliberate narrowing together with what ours grants instead; the list is checked both ways, so
// it cannot hide a loss or outlive the difference it describes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it, type TestContext } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/core/api/types.ts';
import { labelSelectorToSelector, type LabelSelector } from '../../src/go/labels/index.ts';
import { deployManifests } from '../../src/registry/install.ts';
import { helmTemplate } from '../../scripts/manifests.ts';
import { upstreamManifestsDir } from '../support/upstream.ts';

// Release name and namespace that give upstream's objects the names ours have.
const RELEASE = 'cluster-registry';
const NAMESPACE = 'cluster-registry';
const CONTROLLER = 'cluster-registry-controller';
const READER = 'cluster-registry-controller-reader';
const WEBHOOK_CONFIGURATION = 'cluster-registry-controller-cluster-validator-webhook';

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface RbacObject extends KubeObject {
  rules?: Rule[];
  aggregationRule?: { clusterRoleSelectors?: LabelSelector[] };
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/** One permission: a verb on a resource, cluster-wide (namespace '*') or in one namespace, on any object or only the named ones. */
interface Grant {
  group: string;
  resource: string;
  verb: string;
  namespace: string;
  names: readonly string[];
}

/** A permission upstream grants that ours deliberately does not grant as upstream does. */
interface Narrowing {
  group: string;
  resources: readonly string[];
  /** Upstream's verbs that ours does not grant as upstream does. */
  verbs: readonly string[];
  /** What ours grants instead (checked); absent: none of these verbs at all. */
  instead?: { verbs: readonly string[]; namespace?: string; names?: readonly string[] };
  why: string;
}

const ALL_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

const CONTROLLER_NARROWINGS: readonly Narrowing[] = [
  {
    group: '',
    resources: ['secrets'],
    verbs: ALL_VERBS,
    instead: { verbs: ALL_VERBS, namespace: NAMESPACE },
    why: 'the registry reads and writes only the credential Secrets, which live in its namespace; syncing Secrets of other namespaces by rule needs an aggregated ClusterRole, as any other synced kind does',
  },
  {
    group: '',
    resources: ['serviceaccounts'],
    verbs: ['get', 'list', 'watch'],
    instead: { verbs: ['get', 'list', 'watch'], namespace: NAMESPACE },
    why: 'the only ServiceAccount it deals with is the reader, in its namespace',
  },
  {
    group: 'coordination.k8s.io',
    resources: ['leases'],
    verbs: ['*'],
    instead: { verbs: ALL_VERBS, namespace: NAMESPACE },
    why: 'leader election uses one Lease, in its namespace',
  },
  {
    group: '',
    resources: ['configmaps'],
    verbs: ALL_VERBS,
    why: "ours elects its leader with a Lease only; upstream's controller-runtime also locks a ConfigMap",
  },
  {
    group: '',
    resources: ['configmaps/status'],
    verbs: ['get', 'update', 'patch'],
    why: 'the status of that ConfigMap lock',
  },
  {
    group: '',
    resources: ['events'],
    verbs: ['get', 'list', 'watch', 'delete'],
    why: 'it records Events and never reads or deletes them',
  },
  {
    group: 'admissionregistration.k8s.io',
    resources: ['mutatingwebhookconfigurations'],
    verbs: ALL_VERBS,
    why: 'neither implementation has a mutating webhook',
  },
  {
    group: 'admissionregistration.k8s.io',
    resources: ['validatingwebhookconfigurations'],
    verbs: ['create', 'delete'],
    why: 'the webhook configuration is installed with the controller, which never creates or deletes one',
  },
  {
    group: 'admissionregistration.k8s.io',
    resources: ['validatingwebhookconfigurations'],
    verbs: ['get', 'list', 'watch', 'update', 'patch'],
    instead: { verbs: ['get', 'list', 'watch', 'update', 'patch'], names: [WEBHOOK_CONFIGURATION] },
    why: 'it reads (by name) and changes only its own webhook configuration',
  },
];

const READER_NARROWINGS: readonly Narrowing[] = [
  {
    group: '',
    resources: ['secrets'],
    verbs: ['get', 'list', 'watch'],
    instead: { verbs: ['get', 'list', 'watch'], namespace: NAMESPACE },
    why:
      'peers need only the credential Secrets, which live in the controller namespace, not every Secret of the cluster. ' +
      "In a mixed group this stops an upstream peer from pulling this cluster's credential Secrets: before it starts the core " +
      'cluster-secrets rule it asks for get, list and watch on Secrets cluster-wide, is refused and retries forever, unless deploy/compat is applied',
  },
];

function grantsOf(objects: readonly RbacObject[], serviceAccount: string): Grant[] {
  const clusterRoles = objects.filter((o) => o.kind === 'ClusterRole');
  const rulesOf = (kind: string, name: string, namespace: string | undefined): Rule[] => {
    const role = objects.find((o) => o.kind === kind && o.metadata.name === name && (kind === 'ClusterRole' || o.metadata.namespace === namespace));
    if (!role?.aggregationRule) return role?.rules ?? [];
    // What the controller manager fills an aggregated role with: the rules of every ClusterRole its selectors match.
    const selectors = (role.aggregationRule.clusterRoleSelectors ?? []).map((s) => labelSelectorToSelector(s));
    return clusterRoles.filter((r) => selectors.some((s) => s.matches(r.metadata.labels ?? {}))).flatMap((r) => r.rules ?? []);
  };
  return objects
    .filter((b) => (b.kind === 'ClusterRoleBinding' || b.kind === 'RoleBinding') && b.subjects?.some((s) => s.kind === 'ServiceAccount' && s.name === serviceAccount && s.namespace === NAMESPACE))
    .flatMap((b) => {
      const namespace = b.kind === 'ClusterRoleBinding' ? '*' : (b.metadata.namespace ?? '');
      return rulesOf(b.roleRef?.kind ?? '', b.roleRef?.name ?? '', b.metadata.namespace).flatMap((r) =>
        (r.apiGroups ?? []).flatMap((group) =>
          (r.resources ?? []).flatMap((resource) => r.verbs.map((verb) => ({ group, resource, verb, namespace, names: r.resourceNames ?? [] }))),
        ),
      );
    });
}

const any = (pattern: string, value: string) => pattern === '*' || pattern === value;

/** Whether `have` allows everything `need` does. */
function covers(have: Grant, need: Grant): boolean {
  return (
    any(have.group, need.group) &&
    any(have.resource, need.resource) &&
    any(have.verb, need.verb) &&
    any(have.namespace, need.namespace) &&
    (have.names.length === 0 || (need.names.length > 0 && need.names.every((n) => have.names.includes(n))))
  );
}

const what = (g: Pick<Grant, 'verb' | 'resource' | 'group'>) => `${g.verb} ${g.resource}${g.group ? `.${g.group}` : ''}`;

function show(g: Grant): string {
  const scope = g.namespace === '*' ? 'cluster-wide' : `in ${g.namespace}`;
  return `${what(g)} ${scope}${g.names.length ? ` named ${g.names.join(',')}` : ''}`;
}

const narrowed = (n: Narrowing, g: Grant) => g.group === n.group && n.resources.includes(g.resource) && n.verbs.includes(g.verb);

/** Upstream's grants ours lacks outside the narrowings, and every narrowing that is not exactly true. */
function audit(upstream: readonly Grant[], ours: readonly Grant[], narrowings: readonly Narrowing[]): string[] {
  const uncovered = upstream.filter((g) => !ours.some((o) => covers(o, g)));
  const problems = uncovered.filter((g) => !narrowings.some((n) => narrowed(n, g))).map((g) => `ours does not grant ${show(g)}, which upstream grants`);
  for (const n of narrowings) {
    for (const resource of n.resources) {
      for (const verb of n.verbs) {
        if (!uncovered.some((u) => u.group === n.group && u.resource === resource && u.verb === verb)) {
          problems.push(`listed narrowing of ${what({ verb, resource, group: n.group })} is stale: upstream does not grant it, or ours grants it as upstream does`);
        }
      }
      if (n.instead) {
        const { verbs, namespace = '*', names = [] } = n.instead;
        for (const g of verbs.map((verb) => ({ group: n.group, resource, verb, namespace, names }))) {
          if (!ours.some((o) => covers(o, g))) problems.push(`ours does not grant ${show(g)}, which the narrowing says it grants instead`);
        }
      } else {
        for (const o of ours.filter((x) => narrowed(n, x))) problems.push(`ours grants ${show(o)}, which the narrowing says it does not grant at all`);
      }
    }
  }
  return problems;
}

function announce(t: TestContext, narrowings: readonly Narrowing[]): void {
  for (const n of narrowings) {
    const instead = n.instead ? `ours: ${n.instead.verbs.join(',')} ${n.instead.namespace ? `in ${n.instead.namespace} only` : `on ${n.instead.names?.join(',') ?? ''} only`}` : 'ours: not granted';
    t.diagnostic(`narrowed ${n.verbs.join(',')} ${n.resources.join(',')}${n.group ? `.${n.group}` : ''} (${instead}): ${n.why}`);
  }
}

describe('deploy/manifests RBAC against upstream v0.2.12', () => {
  let upstream: RbacObject[] = [];
  const ours = deployManifests('manifests') as RbacObject[];

  before(async () => {
    const chart = join(upstreamManifestsDir(), 'chart');
    upstream = parseAllDocuments(await helmTemplate([], { release: RELEASE, chart })).map((d) => d.toJS() as RbacObject | null).filter((o): o is RbacObject => !!o);
  });

  it('upstream binds its roles to the ServiceAccounts ours has', () => {
    const serviceAccounts = (objects: readonly RbacObject[]) =>
      objects.filter((o) => o.kind === 'ServiceAccount').map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`).sort();
    assert.deepEqual(serviceAccounts(upstream), [`${NAMESPACE}/${CONTROLLER}`, `${NAMESPACE}/${READER}`]);
    assert.deepEqual(serviceAccounts(ours), serviceAccounts(upstream));
    assert.ok(grantsOf(upstream, CONTROLLER).length > 0 && grantsOf(upstream, READER).length > 0, 'the rendered chart grants its ServiceAccounts nothing');
  });

  it("the controller: ours grants what upstream's grants, but for the listed narrowings", (t) => {
    announce(t, CONTROLLER_NARROWINGS);
    assert.deepEqual(audit(grantsOf(upstream, CONTROLLER), grantsOf(ours, CONTROLLER), CONTROLLER_NARROWINGS), []);
  });

  it("the reader: ours grants what upstream's grants, but for the listed narrowing", (t) => {
    announce(t, READER_NARROWINGS);
    assert.deepEqual(audit(grantsOf(upstream, READER), grantsOf(ours, READER), READER_NARROWINGS), []);
  });

  it('the reader with deploy/compat (members run upstream): all that upstream grants, Secrets cluster-wide included', () => {
    assert.deepEqual(audit(grantsOf(upstream, READER), grantsOf([...ours, ...deployManifests('compat')] as RbacObject[], READER), []), []);
  });

  it('the audit names a lost grant and a narrowing that is no longer true', () => {
    const withRules = (role: string, rules: (current: Rule[]) => Rule[]) =>
      ours.map((o) => (o.kind === 'ClusterRole' && o.metadata.name === role ? { ...o, rules: rules(o.rules ?? []) } : o));
    const lost = withRules(READER, (rules) => rules.map((r) => ({ ...r, resources: r.resources?.filter((x) => x !== 'nodes') })));
    assert.deepEqual(audit(grantsOf(upstream, READER), grantsOf(lost, READER), READER_NARROWINGS), [
      'ours does not grant get nodes cluster-wide, which upstream grants',
      'ours does not grant list nodes cluster-wide, which upstream grants',
      'ours does not grant watch nodes cluster-wide, which upstream grants',
    ]);
    const widened = withRules(READER, (rules) => [...rules, { apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    assert.deepEqual(audit(grantsOf(upstream, READER), grantsOf(widened, READER), READER_NARROWINGS), [
      'listed narrowing of get secrets is stale: upstream does not grant it, or ours grants it as upstream does',
    ]);
  });
});
