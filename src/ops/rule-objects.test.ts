import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, formatSourceIdentity, LABELS } from '../core/api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRule, ResourceSyncRuleSpec } from '../core/api/types.ts';
import type { ObjectReader } from '../kube/index.ts';
import { MAX_LISTED, MAX_RULE_OBJECTS, ruleObjects, type RuleObject } from './rule-objects.ts';

const LOCAL = '11111111-1111-1111-1111-111111111111';
const PEER = '22222222-2222-2222-2222-222222222222';
const CLUSTERS: Cluster[] = [{ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: 'west' }, spec: { clusterID: PEER } }];

const discovery = {
  '/api': { kind: 'APIGroupDiscoveryList', items: [{ metadata: { name: '' }, versions: [{ version: 'v1', resources: [{ resource: 'configmaps', responseKind: { kind: 'ConfigMap' }, scope: 'Namespaced', verbs: ['get', 'list'] }] }] }] },
  '/apis': { kind: 'APIGroupDiscoveryList', items: [] },
};

interface Listed {
  resource: string;
  namespace?: string;
  labelSelector?: string;
  limit?: number;
}

/** A cluster holding `objects` (ConfigMaps): lists by namespace and by the ownership label's presence, up to the limit asked, and says what it was asked. */
function cluster(objects: KubeObject[]): ObjectReader & { asked: Listed[] } {
  const asked: Listed[] = [];
  const reader = {
    asked,
    server: new URL('https://local.example'),
    get: () => Promise.resolve({ metadata: { name: 'kube-system', uid: LOCAL } }),
    getJson: (path: '/api' | '/apis') => Promise.resolve(discovery[path]),
    list: (ref: { resource: string }, o: Omit<Listed, 'resource'> = {}) => {
      asked.push({ resource: ref.resource, ...o });
      const items = objects.filter((x) => (!o.namespace || x.metadata.namespace === o.namespace) && (!o.labelSelector || x.metadata.labels?.[o.labelSelector] !== undefined));
      const limit = o.limit ?? items.length;
      return Promise.resolve({ metadata: items.length > limit ? { continue: 'more' } : {}, items: items.slice(0, limit) });
    },
  };
  return reader as unknown as ObjectReader & { asked: Listed[] };
}

const rule = (spec: ResourceSyncRuleSpec): ResourceSyncRule => ({ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name: 'r' }, spec });
const CONFIGMAPS = { groupVersionKind: { version: 'v1', kind: 'ConfigMap' } };

function configMap(name: string, namespace: string, o: { labels?: Record<string, string>; copyOf?: string } = {}): KubeObject {
  const labels: Record<string, string> = { ...o.labels };
  const annotations: Record<string, string> = {};
  if (o.copyOf) {
    labels[LABELS.ownership] = annotations[ANNOTATIONS.ownership] = PEER;
    annotations[ANNOTATIONS.source] = formatSourceIdentity({ clusterID: PEER, group: '', kind: 'ConfigMap', namespace, name: o.copyOf, rule: 'r' });
  }
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels, annotations } };
}

describe("a rule's objects on one cluster", () => {
  it('lists the sources it takes there and the copies it made, sources first, each by namespace and name, a copy with where it came from', async () => {
    const here = cluster([configMap('b', 'app', { labels: { app: 'x' } }), configMap('other', 'app', { labels: { app: 'y' } }), configMap('c', 'app', { copyOf: 'c' }), configMap('a', 'app', { labels: { app: 'x' } }), configMap('elsewhere', 'ops', { labels: { app: 'x' } })]);
    const listed = await ruleObjects(here, rule({ ...CONFIGMAPS, rules: [{ match: [{ namespaces: ['app'], labels: [{ matchLabels: { app: 'x' } }] }] }] }), { namespace: 'cluster-registry', clusters: CLUSTERS });
    assert.deepEqual(listed.objects, [
      { kind: 'ConfigMap', namespace: 'app', name: 'a', role: 'source' },
      { kind: 'ConfigMap', namespace: 'app', name: 'b', role: 'source' },
      { kind: 'ConfigMap', namespace: 'app', name: 'c', role: 'copy', from: 'west' },
    ] satisfies RuleObject[]);
    assert.deepEqual(listed.notes, []);
    // In the namespace its match names only: its sources, then its copies by the ownership label.
    assert.deepEqual(here.asked.map((a) => [a.namespace, a.labelSelector]), [['app', undefined], ['app', LABELS.ownership]]);
  });

  it('says what it did not look at: a kind not served, a list cut at its bound', async () => {
    const unserved = await ruleObjects(cluster([]), rule({ groupVersionKind: { group: 'nope.example.com', version: 'v1', kind: 'Nope' }, rules: [{}] }), { namespace: 'cluster-registry', clusters: CLUSTERS });
    assert.deepEqual(unserved.objects, []);
    assert.match(unserved.notes.join(), /Nope.* is not served here/);

    const many = Array.from({ length: MAX_LISTED + 1 }, (_, i) => configMap(`cm-${String(i).padStart(4, '0')}`, 'app'));
    const cut = await ruleObjects(cluster(many), rule({ ...CONFIGMAPS, rules: [{}] }), { namespace: 'cluster-registry', clusters: CLUSTERS });
    assert.equal(cut.objects.length, MAX_RULE_OBJECTS);
    assert.ok(cut.notes.some((n) => n.startsWith(`more than ${MAX_LISTED} configmaps`)), cut.notes.join());
    assert.ok(cut.notes.some((n) => n === `${MAX_LISTED} objects: the first ${MAX_RULE_OBJECTS} are listed`), cut.notes.join());
  });

  it('of an invalid rule: none, and why', async () => {
    const here = cluster([configMap('a', 'app')]);
    const listed = await ruleObjects(here, rule({ ...CONFIGMAPS, rules: [{ match: [{ labels: [{ matchExpressions: [{ key: 'app', operator: 'Bogus' }] }] }] }] }), { namespace: 'cluster-registry', clusters: CLUSTERS });
    assert.deepEqual(listed.objects, []);
    assert.match(listed.notes.join(), /^the rule is invalid: /);
    assert.deepEqual(here.asked, [], 'nothing read');
  });
});
