// Every rule in docs/cookbook.md and examples/ is valid as written, and the templated recipes
// make the copies the cookbook says, rendered by the sync's own mutation code for a sample source
// object and Cluster.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Cluster, KubeObject } from '../../src/core/api/types.ts';
import { formatIssue, renderRule, validateRule } from '../../src/core/rules/index.ts';
import { PACKAGE_ROOT } from '../../src/sandbox/index.ts';
import { COOKBOOK_OBJECTS, isRule, objectsOf, recipe, sample } from '../support/cookbook.ts';

const examples = readdirSync(join(PACKAGE_ROOT, 'examples', 'sync')).flatMap((f) => objectsOf(readFileSync(join(PACKAGE_ROOT, 'examples', 'sync', f), 'utf8')));
const rules = [...COOKBOOK_OBJECTS, ...examples].filter(isRule);
type Spec<T> = KubeObject & { spec: T };

const cluster = (name: string, id: string, annotations: Record<string, string> = {}): Cluster => ({
  apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
  kind: 'Cluster',
  metadata: { name, annotations },
  spec: { clusterID: id },
});
const west = cluster('west', 'id-west', { 'mesh.example.com/east-west-gateway': '203.0.113.10', 'mesh.example.com/network': 'network1' });
const east = cluster('east', 'id-east', { 'mesh.example.com/network': 'network2' });

describe('rules cookbook', () => {
  it('has only valid rules, in the docs and in examples/', () => {
    assert.ok(rules.length >= 11, `found ${rules.length} rules`);
    for (const r of rules) assert.deepEqual(validateRule(r.spec).map(formatIssue), [], `${r.metadata.name ?? ''} is valid`);
  });

  it("shares each member's mesh root renamed after its cluster and labelled for the trust bundle", () => {
    const root: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'istio-ca-root-cert', namespace: 'istio-system' }, data: { 'root-cert.pem': 'PEM' } };
    const out = renderRule({ rule: recipe('mesh-roots-sink'), object: root, cluster: west, localCluster: east });
    assert.deepEqual(out.errors, []);
    assert.equal(out.copy?.metadata.name, 'istio-ca-root-cert-west');
    assert.equal(out.copy?.metadata.labels?.['mesh.example.com/trust-root'], 'true');
    assert.equal(out.copy?.metadata.labels?.['cluster-registry.k8s.cisco.com/original-name'], 'istio-ca-root-cert');
  });

  it("turns an exported ServiceEntry into one pointing at its member's east-west gateway", () => {
    const entry = sample('ServiceEntry', 'payments');
    const out = renderRule({ rule: recipe('exported-services-sink'), object: entry, cluster: west, localCluster: east });
    assert.deepEqual(out.errors, []);
    assert.equal(out.copy?.metadata.name, 'payments-west');
    assert.equal((out.copy as Spec<{ endpoints: { address: string }[] }>).spec.endpoints[0]?.address, '203.0.113.10');
    const unlabelled = renderRule({ rule: recipe('exported-services-sink'), object: { ...entry, metadata: { ...entry.metadata, labels: {} } }, cluster: west, localCluster: east });
    assert.equal(unlabelled.matched, false, 'only exported entries');
  });

  it("renames an exported service's DestinationRule after its member, its policy kept", () => {
    const out = renderRule({ rule: recipe('exported-policies-sink'), object: sample('DestinationRule', 'payments'), cluster: west, localCluster: east });
    assert.deepEqual(out.errors, []);
    assert.equal(out.copy?.metadata.name, 'payments-west');
    assert.deepEqual((out.copy as Spec<unknown>).spec, { host: 'payments.shop.global', trafficPolicy: { tls: { mode: 'ISTIO_MUTUAL' } } });
  });

  it("gives every member the east-west Gateway under its name, selecting that member's network", () => {
    const gateway = sample('Gateway', 'cross-network-gateway');
    const out = renderRule({ rule: recipe('east-west-gateway-sink'), object: gateway, cluster: west, localCluster: east });
    assert.deepEqual(out.errors, []);
    assert.equal(out.copy?.metadata.name, 'cross-network-gateway');
    assert.deepEqual((out.copy as Spec<{ selector: unknown }>).spec.selector, { istio: 'eastwestgateway', 'topology.istio.io/network': 'network2' });
    // An author who selected by the gateway's app label only: the member's network is added.
    const unnetworked = { ...gateway, spec: { ...(gateway as Spec<object>).spec, selector: { istio: 'eastwestgateway' } } };
    const added = renderRule({ rule: recipe('east-west-gateway-sink'), object: unnetworked, cluster: west, localCluster: east });
    assert.equal((added.copy as Spec<{ selector: Record<string, string> }>).spec.selector['topology.istio.io/network'], 'network2');
  });

  it("shares the mesh-wide mTLS mode, unless the member's Cluster holds it back", () => {
    const policy = sample('PeerAuthentication', 'default');
    const mode = (local: Cluster) => (renderRule({ rule: recipe('mesh-mtls-sink'), object: policy, cluster: west, localCluster: local }).copy as Spec<{ mtls: { mode: string } }> | undefined)?.spec.mtls.mode;
    assert.equal(mode(east), 'STRICT');
    assert.equal(mode(cluster('east', 'id-east', { 'mesh.example.com/mtls-mode': 'PERMISSIVE' })), 'PERMISSIVE');
  });

  it('takes TLS Secrets by their type, and no other', () => {
    const secret = (type: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'site', namespace: 'ingress', labels: { share: 'tls' } }, type, data: {} }) as KubeObject;
    assert.equal(renderRule({ rule: recipe('shared-tls-sink'), object: secret('kubernetes.io/tls'), cluster: west, localCluster: east }).matched, true);
    assert.equal(renderRule({ rule: recipe('shared-tls-sink'), object: secret('Opaque'), cluster: west, localCluster: east }).matched, false);
  });
});
