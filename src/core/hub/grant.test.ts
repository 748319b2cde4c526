import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../api/types.ts';
import { isKubernetesGroup } from '../trust/index.ts';
import { grantPlan, grantRefusal, type GrantRequest } from './grant.ts';

const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
const request = (extra: Partial<GrantRequest> = {}): GrantRequest => ({ spoke: 'eu1', spokeClusterID: 'spoke-id', controllerNamespace: 'cluster-registry', resource: widgets, namespaces: ['team-eu1'], secrets: [], ...extra });
type Role = KubeObject & { rules?: { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[]; roleRef?: { kind: string; name: string } };

describe('what hub grant gives a spoke', () => {
  it('refuses, with the reason, what a spoke must never get on its hub', () => {
    const cases: [Partial<GrantRequest>, RegExp][] = [
      [{ spoke: 'EU_1' }, /--spoke "EU_1" must be a DNS label/],
      [{ resource: { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true } }, /Role\.rbac\.authorization\.k8s\.io objects are never synced.*never granted them/],
      [{ resource: { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false }, namespaces: [] }, /never synced/],
      [{ resource: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true } }, /never synced/],
      [{ resource: { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', resource: 'resourcesyncrules', kind: 'ResourceSyncRule', namespaced: false }, namespaces: [] }, /the registry's own kind/],
      [{ resource: { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true } }, /list every Secret/],
      [{ namespaces: [] }, /namespaced: name the hub namespaces/],
      [{ namespaces: ['team-eu1', 'kube-system'] }, /kube-system is a system namespace/],
      [{ namespaces: ['kube-public'] }, /system namespace/],
      [{ namespaces: ['kube-node-lease'] }, /system namespace/],
      [{ namespaces: ['cluster-registry'] }, /the hub's controller namespace/],
      [{ namespaces: ['Not_A_Namespace'] }, /not a namespace name/],
      [{ resource: { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false }, namespaces: [] }, /cluster-scoped kind of Kubernetes itself/],
      [{ resource: { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses', kind: 'StorageClass', namespaced: false }, namespaces: [] }, /StorageClass.storage.k8s.io objects are never synced/],
      [{ resource: { group: 'resource.k8s.io', version: 'v1', resource: 'deviceclasses', kind: 'DeviceClass', namespaced: false }, namespaces: [] }, /DeviceClass.resource.k8s.io objects are never synced/],
      [{ resource: { ...widgets, namespaced: false } }, /cluster-scoped: --hub-namespace does not apply/],
      // Kubernetes' own namespaced kinds: patch there runs code on the hub or redirects its traffic.
      ...(
        [
          ['apps', 'deployments', 'Deployment'],
          ['', 'pods', 'Pod'],
          ['batch', 'cronjobs', 'CronJob'],
          ['', 'configmaps', 'ConfigMap'],
          ['', 'services', 'Service'],
          ['', 'serviceaccounts', 'ServiceAccount'],
          ['discovery.k8s.io', 'endpointslices', 'EndpointSlice'],
          ['networking.k8s.io', 'ingresses', 'Ingress'],
          ['gateway.networking.k8s.io', 'httproutes', 'HTTPRoute'],
        ] as const
      ).map(([group, resource, kind]): [Partial<GrantRequest>, RegExp] => [
        { resource: { group, version: 'v1', resource, kind, namespaced: true } },
        new RegExp(`^${kind}${group ? `\\.${group.replaceAll('.', '\\.')}` : ''} is a kind of Kubernetes itself.*runs code on the hub or redirects its traffic.*custom resources only`),
      ]),
      [{ resource: { ...widgets, namespaced: false }, namespaces: [], secrets: ['s'] }, /no namespace for --secret/],
    ];
    for (const [extra, why] of cases) assert.match(grantRefusal(request(extra)) ?? 'granted', why, JSON.stringify(extra));
    assert.equal(grantRefusal(request()), undefined);
    assert.equal(grantRefusal(request({ resource: { ...widgets, namespaced: false }, namespaces: [] })), undefined, 'a custom cluster-scoped kind');
    assert.deepEqual(['', 'apps', 'storage.k8s.io', 'metrics.k8s.io', 'x.kubernetes.io', 'example.com'].map(isKubernetesGroup), [true, true, true, true, true, false]);
  });

  it('binds the kind in each namespace named only, Secrets by name only, and tokens of its own ServiceAccount only', () => {
    const plan = grantPlan(request({ namespaces: ['team-eu1', 'shop-eu1'], secrets: ['db-eu1'] }));
    const objects = plan.objects as Role[];
    assert.equal(plan.account, 'cluster-registry-spoke-eu1');
    const summary = objects.map((o) => `${o.kind} ${o.metadata.namespace ?? '-'}/${o.metadata.name ?? ''}`);
    assert.deepEqual(summary, [
      'ServiceAccount cluster-registry/cluster-registry-spoke-eu1',
      'ClusterRole -/cluster-registry-spoke-eu1-identity',
      'ClusterRoleBinding -/cluster-registry-spoke-eu1-identity',
      'Role cluster-registry/cluster-registry-spoke-eu1-token',
      'RoleBinding cluster-registry/cluster-registry-spoke-eu1-token',
      'Role team-eu1/cluster-registry-spoke-eu1-widgets.example.com',
      'RoleBinding team-eu1/cluster-registry-spoke-eu1-widgets.example.com',
      'Role shop-eu1/cluster-registry-spoke-eu1-widgets.example.com',
      'RoleBinding shop-eu1/cluster-registry-spoke-eu1-widgets.example.com',
    ]);
    assert.equal(objects[0]?.metadata.annotations?.['cluster-registry.k8s.cisco.com/spoke-cluster-id'], 'spoke-id', 'leave finds the grant by it');
    for (const o of objects) assert.equal(o.metadata.labels?.['cluster-registry.k8s.cisco.com/spoke'], 'eu1', 'revoke finds everything by it');
    // Every rule of every role: nothing cluster-wide but reading kube-system, nothing unnamed on Secrets or tokens.
    const rules = objects.flatMap((o) => (o.rules ?? []).map((r) => ({ role: `${o.kind} ${o.metadata.namespace ?? '-'}`, ...r })));
    assert.deepEqual(rules.filter((r) => r.role === 'ClusterRole -'), [{ role: 'ClusterRole -', apiGroups: [''], resources: ['namespaces'], resourceNames: ['kube-system'], verbs: ['get'] }]);
    assert.deepEqual(rules.filter((r) => r.resources.some((x) => x.startsWith('serviceaccounts'))), [{ role: 'Role cluster-registry', apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: ['cluster-registry-spoke-eu1'], verbs: ['create'] }]);
    for (const r of rules.filter((r) => r.resources.includes('secrets'))) assert.deepEqual([r.resourceNames, r.verbs], [['db-eu1'], ['get', 'update']]);
    assert.deepEqual(plan.obsolete, { clusterRole: 'cluster-registry-spoke-eu1-widgets.example.com', tokenSecret: 'cluster-registry-spoke-eu1-token' });
    const bindings = objects.filter((o) => o.kind?.endsWith('Binding'));
    for (const b of bindings) assert.equal(b.roleRef?.name, b.metadata.name);
  });

  it('gives a custom cluster-scoped kind a ClusterRole for that kind alone', () => {
    const plan = grantPlan(request({ resource: { ...widgets, namespaced: false }, namespaces: [] }));
    const kindRole = (plan.objects as Role[]).find((o) => o.metadata.name === 'cluster-registry-spoke-eu1-widgets.example.com' && o.kind === 'ClusterRole');
    assert.deepEqual(kindRole?.rules?.map((r) => [r.resources, r.verbs]), [[['widgets'], ['get', 'list', 'watch', 'patch']], [['widgets/status'], ['patch']]]);
    assert.equal(plan.obsolete.clusterRole, undefined, 'it is the same role an earlier grant made');
  });
});
