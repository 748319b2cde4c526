// Every rule in docs/cookbook.md and examples/ is valid as written, and the templated recipes
// make the copies the cookbook says, rendered by the sync's own mutation code for a sample source
// object and Cluster.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { Cluster, KubeObject, ResourceSyncRule } from '../../src/core/api/types.ts';
import { formatIssue, renderRule, validateRule } from '../../src/core/rules/index.ts';
import { PACKAGE_ROOT } from '../../src/sandbox/index.ts';

/** Objects of YAML text, as kubectl reads them (YAML 1.1). */
const objectsOf = (text: string): KubeObject[] => parseAllDocuments(text, { version: '1.1' }).map((d) => d.toJS() as KubeObject).filter(Boolean);

const cookbook = readFileSync(join(PACKAGE_ROOT, 'docs', 'cookbook.md'), 'utf8');
const recipes = [...cookbook.matchAll(/```yaml\n([\s\S]*?)```/g)].flatMap((m) => objectsOf(m[1] ?? ''));
const examples = readdirSync(join(PACKAGE_ROOT, 'examples', 'sync')).flatMap((f) => objectsOf(readFileSync(join(PACKAGE_ROOT, 'examples', 'sync', f), 'utf8')));
const rules = [...recipes, ...examples].filter((o): o is ResourceSyncRule => o.kind === 'ResourceSyncRule');
const recipe = (name: string): ResourceSyncRule => rules.find((r) => r.metadata.name === name) ?? assert.fail(`no recipe ${name}`);

const cluster = (name: string, id: string, annotations: Record<string, string> = {}): Cluster => ({
  apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
  kind: 'Cluster',
  metadata: { name, annotations },
  spec: { clusterID: id },
});
const west = cluster('west', 'id-west', { 'mesh.example.com/east-west-gateway': '203.0.113.10' });
const east = cluster('east', 'id-east');

describe('rules cookbook', () => {
  it('has only valid rules, in the docs and in examples/', () => {
    assert.ok(rules.length >= 8, `found ${rules.length} rules`);
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
    const entry = {
      apiVersion: 'networking.istio.io/v1',
      kind: 'ServiceEntry',
      metadata: { name: 'payments', namespace: 'shop', labels: { 'mesh.example.com/export': 'true' } },
      spec: { hosts: ['payments.shop.global'], endpoints: [{ address: 'placeholder', ports: { http: 15443 } }] },
    } as KubeObject;
    const out = renderRule({ rule: recipe('exported-services-sink'), object: entry, cluster: west, localCluster: east });
    assert.deepEqual(out.errors, []);
    assert.equal(out.copy?.metadata.name, 'payments-west');
    assert.equal((out.copy as unknown as { spec: { endpoints: { address: string }[] } }).spec.endpoints[0]?.address, '203.0.113.10');
    const unlabelled = renderRule({ rule: recipe('exported-services-sink'), object: { ...entry, metadata: { ...entry.metadata, labels: {} } }, cluster: west, localCluster: east });
    assert.equal(unlabelled.matched, false, 'only exported entries');
  });

  it('takes TLS Secrets by their type, and no other', () => {
    const secret = (type: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'site', namespace: 'ingress', labels: { share: 'tls' } }, type, data: {} }) as KubeObject;
    assert.equal(renderRule({ rule: recipe('shared-tls-sink'), object: secret('kubernetes.io/tls'), cluster: west, localCluster: east }).matched, true);
    assert.equal(renderRule({ rule: recipe('shared-tls-sink'), object: secret('Opaque'), cluster: west, localCluster: east }).matched, false);
  });
});
