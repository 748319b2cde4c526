import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApiResource } from './discovery.ts';
import { holdsOnly, kindsToList, type Listing } from './namespace-contents.ts';
import type { KubeObject } from './types.ts';

const obj = (name: string, uid: string, owners: string[] = []): KubeObject => ({ metadata: { name, uid, ownerReferences: owners.map((o) => ({ apiVersion: 'v1', kind: 'X', name: o, uid: o })) } });
const listed = (resource: string, items: KubeObject[], more = false): Listing => ({ resource, items, more });
const made = obj('db', 'db-uid');
/** A namespace as Kubernetes makes it: its default ServiceAccount and root CA ConfigMap. */
const fresh = (): Listing[] => [listed('serviceaccounts', [obj('default', 'sa')]), listed('configmaps', [obj('kube-root-ca.crt', 'ca')]), listed('secrets', [])];

describe('whether a namespace holds only what is about to go', () => {
  it('yes: what Kubernetes makes everywhere, the objects given, and what they own, however deep', () => {
    assert.deepEqual(holdsOnly(fresh(), [made]), { only: true });
    const withDependents = [...fresh(), listed('widgets.example.com', [made]), listed('pods', [obj('p', 'pod', ['rs'])]), listed('replicasets.apps', [obj('rs', 'rs', ['db-uid'])])];
    assert.deepEqual(holdsOnly(withDependents, [made]), { only: true }, 'a pod of a replica set of the object goes with it');
  });
  it('no: anything else, named', () => {
    const cases: [Listing[], RegExp][] = [
      [[...fresh(), listed('configmaps', [obj('users-own-notes', 'n')])], /holds configmaps users-own-notes/],
      [[listed('serviceaccounts', [obj('default', 'sa'), obj('robot', 'r')])], /holds serviceaccounts robot/],
      [[listed('secrets', [obj('s', 's', ['someone-else'])])], /holds secrets s/],
      [[listed('configmaps', [obj('kube-root-ca.crt', 'ca')]), listed('secrets', [obj('default', 'x')])], /holds secrets default/],
    ];
    for (const [listings, why] of cases) {
      const v = holdsOnly(listings, [made]);
      assert.equal(v.only, false);
      assert.match(v.only ? '' : v.why, why);
    }
  });
  it('no, when unsure: a kind that could not be listed, or more of a kind than was read', () => {
    const forbidden = holdsOnly([...fresh(), { resource: 'secrets', error: '403 Forbidden' }], [made]);
    assert.deepEqual(forbidden, { only: false, why: 'its secrets could not be listed (403 Forbidden)' });
    const more = holdsOnly([listed('pods', [obj('p', 'pod', ['db-uid'])], true)], [made]);
    assert.deepEqual(more, { only: false, why: 'it holds more pods than were looked at' });
  });
  it('looks at every namespaced kind that can be listed, once, and never at Events', () => {
    const r = (group: string, version: string, resource: string, namespaced = true, verbs = ['list', 'get']): ApiResource => ({ group, version, resource, kind: resource, namespaced, verbs, subresources: [] });
    const all = [r('', 'v1', 'configmaps'), r('', 'v1', 'nodes', false), r('', 'v1', 'bindings', true, ['create']), r('', 'v1', 'events'), r('events.k8s.io', 'v1', 'events'), r('autoscaling', 'v2', 'horizontalpodautoscalers'), r('autoscaling', 'v1', 'horizontalpodautoscalers'), r('example.com', 'v1', 'widgets')];
    assert.deepEqual(kindsToList(all).map((k) => `${k.resource}.${k.group}/${k.version}`), ['configmaps./v1', 'horizontalpodautoscalers.autoscaling/v2', 'widgets.example.com/v1']);
  });
});
