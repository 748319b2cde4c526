import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, CLUSTER_SECRET, HUB_CREDENTIALS, LABELS } from '../api/keys.ts';
import type { Secret } from '../api/resources.ts';
import type { Cluster, HubSyncRule } from '../api/types.ts';
import { foreignRule, hubCredentialsNamespace, hubCredentialsNamespaceProblem, hubCredentialsProblem, misplacedCredentials } from './trust.ts';

const rule = (marks: { annotations?: Record<string, string>; labels?: Record<string, string> } = {}): HubSyncRule => ({
  apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
  kind: 'HubSyncRule',
  metadata: { name: 'r', ...marks },
  spec: { hub: 'h', groupVersionKind: { version: 'v1', kind: 'ConfigMap' } },
});
const secret = (type: string | undefined, extra: Partial<Secret['metadata']> = {}): Secret => ({ apiVersion: 'v1', kind: 'Secret', ...(type ? { type } : {}), metadata: { name: 'creds', namespace: 'cluster-registry', ...extra }, data: {} });
const member: Cluster = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: 'cluster2' }, spec: { clusterID: 'id-2', authInfo: { secretRef: { name: 'creds', namespace: 'cluster-registry' } } } };

describe('what a HubSyncRule may run on', () => {
  it('never a rule carrying any mark of a copy from another cluster', () => {
    assert.equal(foreignRule(rule()), undefined);
    const marked: { annotations?: Record<string, string>; labels?: Record<string, string> }[] = [{ annotations: { [ANNOTATIONS.ownership]: 'peer-id' } }, { labels: { [LABELS.ownership]: 'peer-id' } }, { annotations: { [ANNOTATIONS.source]: '{}' } }];
    for (const marks of marked) {
      assert.match(foreignRule(rule(marks)) ?? '', /marks of a copy synced from another cluster.*runs only on the cluster it was written on/, JSON.stringify(marks));
    }
    assert.match(foreignRule(rule({ annotations: { [ANNOTATIONS.ownership]: 'peer-id' } })) ?? '', /\(peer-id\)/, 'names the owner');
  });
  it('credentials only from a Secret of the hub credentials type, this cluster’s own, that no Cluster reads a member with', () => {
    assert.equal(hubCredentialsProblem(secret(HUB_CREDENTIALS.type), []), undefined);
    const cases: [Secret, Cluster[], RegExp][] = [
      [secret(CLUSTER_SECRET.type), [], /the registry's reader credentials, not hub credentials/],
      [secret('Opaque'), [], /of type Opaque, not hub credentials/],
      [secret(undefined), [], /of type Opaque/],
      [secret(HUB_CREDENTIALS.type, { annotations: { [ANNOTATIONS.ownership]: 'peer' } }), [], /marks of a copy/],
      [secret(HUB_CREDENTIALS.type, { labels: { [LABELS.ownership]: 'peer' } }), [], /marks of a copy/],
      [secret(HUB_CREDENTIALS.type), [member], /the credentials Cluster cluster2 is read with/],
    ];
    for (const [s, clusters, why] of cases) assert.match(hubCredentialsProblem(s, clusters) ?? 'allowed', why);
  });
  it('keeps hub credentials in a namespace of their own, never the controller namespace every member reads Secrets in', () => {
    assert.equal(hubCredentialsNamespace('cluster-registry'), 'cluster-registry-hub');
    assert.equal(hubCredentialsNamespace('cluster-registry', 'hub-creds'), 'hub-creds');
    assert.equal(hubCredentialsNamespaceProblem('cluster-registry-hub', 'cluster-registry'), undefined);
    assert.match(hubCredentialsNamespaceProblem('cluster-registry', 'cluster-registry') ?? '', /the controller namespace, whose Secrets every member of the group reads/);
    assert.match(hubCredentialsNamespaceProblem(hubCredentialsNamespace('x'.repeat(61)), 'x'.repeat(61)) ?? '', /is not a namespace name \(set it explicitly/);
  });
  it('tells an earlier grant’s credentials in the controller namespace apart, and says to grant again', () => {
    const earlier = secret(HUB_CREDENTIALS.type);
    assert.match(misplacedCredentials(earlier, 'cluster-registry-hub') ?? '', /Secret cluster-registry\/creds holds hub credentials where every member of the group can read them.*run cluster-registry hub grant again.*namespace cluster-registry-hub/);
    assert.match(misplacedCredentials(secret('Opaque', { labels: { [HUB_CREDENTIALS.spokeLabel]: 'eu1' } }), 'cluster-registry-hub') ?? '', /hub grant again/, 'the plain Secret an older grant wrote');
    assert.equal(misplacedCredentials(secret('Opaque'), 'cluster-registry-hub'), undefined, 'any other Secret');
    assert.equal(misplacedCredentials(secret(HUB_CREDENTIALS.type, { annotations: { [ANNOTATIONS.ownership]: 'peer' } }), 'cluster-registry-hub'), undefined, "a copy is no grant's");
  });
});
