// The cookbook's mesh recipes (docs/cookbook.md) as written, with its sample objects, on two real
// clusters serving Istio's own CRDs (tools/build.sh istio-crds), not stand-ins: on each kind the
// copy arrives as the recipe's templates make it, stays as the controller wrote it (what the real
// schema stored is what it wants, so it never writes it again), and so does it after an update at
// its source; a deletion there deletes it. A copy the schema refuses is reported on the rule where it would be written, and
// made once the Cluster annotation the template read is fixed. Every source is on cluster1, every
// copy checked on cluster2 (cluster2's own root comes back the other way).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLUSTERS } from '../../src/core/api/resources.ts';
import type { KubeObject, ResourceSyncRule } from '../../src/core/api/types.ts';
import type { ResourceRef, RestClient } from '../../src/kube/index.ts';
import { join as joinClusters } from '../../src/ops/join.ts';
import { Explainer } from '../../src/ops/explain.ts';
import { applyObjects } from '../../src/registry/install.ts';
import { toolPath } from '../../src/sandbox/index.ts';
import { SANDBOX_NAMESPACE, startController, startGroup } from '../../src/testbed/group.ts';
import { objectsOf, recipe, sample } from '../support/cookbook.ts';
import { eventually } from '../support/eventually.ts';
import { allEvents } from '../support/registry.ts';
import { RULES, ensureNamespace, freshLogDir, getOrUndefined, goneFrom, grantKindsOn, groupOver, waitGroupFormed, type SyncGroup } from '../support/sync-helpers.ts';

const CONFIG_MAPS: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
const SERVICE_ENTRIES: ResourceRef = { group: 'networking.istio.io', version: 'v1', resource: 'serviceentries' };
const DESTINATION_RULES: ResourceRef = { group: 'networking.istio.io', version: 'v1', resource: 'destinationrules' };
const GATEWAYS: ResourceRef = { group: 'networking.istio.io', version: 'v1', resource: 'gateways' };
const PEER_AUTHENTICATIONS: ResourceRef = { group: 'security.istio.io', version: 'v1', resource: 'peerauthentications' };

const RECIPES = ['mesh-roots-sink', 'exported-services-sink', 'exported-policies-sink', 'east-west-gateway-sink', 'mesh-mtls-sink'];
/** What each member's Cluster says of it, as the recipes read it; cluster2's mTLS mode has a typo Istio's schema refuses. */
const ANNOTATIONS: Record<string, Record<string, string>> = {
  cluster1: { 'mesh.example.com/east-west-gateway': '198.51.100.1', 'mesh.example.com/network': 'network1' },
  cluster2: { 'mesh.example.com/east-west-gateway': '198.51.100.2', 'mesh.example.com/network': 'network2', 'mesh.example.com/mtls-mode': 'strict' },
};

type Spec<T> = KubeObject & { spec: T };
type ConfigMap = KubeObject & { data?: Record<string, string> };

/** Istio's CRDs, every kind its base chart installs, served. */
async function installIstioCRDs(rest: RestClient): Promise<void> {
  await applyObjects(rest, objectsOf(readFileSync(join(toolPath('istio-crds'), 'crd-all.gen.yaml'), 'utf8')));
  for (const r of [SERVICE_ENTRIES, DESTINATION_RULES, GATEWAYS, PEER_AUTHENTICATIONS]) await eventually(`${r.resource} served`, async () => (await rest.list(r)).items);
}

const rootCert = (pem: string): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'istio-ca-root-cert', namespace: 'istio-system' }, data: { 'root-cert.pem': pem } });

describe("the cookbook's mesh recipes on Istio's real CRDs (2 clusters)", { concurrency: true }, () => {
  let g: SyncGroup;
  const c1 = (): RestClient => g.client('cluster1');
  const c2 = (): RestClient => g.client('cluster2');

  before(async () => {
    // Istio is there before the controllers start, as on a mesh's clusters.
    const sandbox = await startGroup({ dir: freshLogDir('cookbook-istio'), clusters: 2, controllers: false });
    g = await groupOver(sandbox, async (group) => {
      await Promise.all(
        group.names.map(async (c) => {
          const rest = group.client(c);
          await installIstioCRDs(rest);
          await grantKindsOn(rest, 'istio-networking', 'networking.istio.io', ['serviceentries', 'destinationrules', 'gateways']);
          await grantKindsOn(rest, 'istio-security', 'security.istio.io', ['peerauthentications']);
          await grantKindsOn(rest, 'configmaps', '', ['configmaps']);
          for (const ns of ['istio-system', 'shop']) await ensureNamespace(rest, ns);
          await rest.create(CONFIG_MAPS, 'istio-system', rootCert(`root of ${c}`));
        }),
      );
      await Promise.all(sandbox.clusters.map((c) => startController(sandbox, c, { controllerArgs: () => ['--rule-status-interval=1s', '--peer-health-interval=1s'] })));
      for (const c of group.names) {
        await eventually(`${c}'s own Cluster`, () => getOrUndefined(group.client(c), CLUSTERS, undefined, c));
        await group.client(c).patch(CLUSTERS, undefined, c, 'merge', { metadata: { annotations: ANNOTATIONS[c] } });
      }
      await joinClusters({ rest: group.client('cluster1'), label: 'cluster1' }, { rest: group.client('cluster2'), label: 'cluster2' }, { namespace: SANDBOX_NAMESPACE, timeoutMs: 120_000, progress: () => undefined });
    });
    await waitGroupFormed(g);
    for (const r of RECIPES) await c1().create(RULES, undefined, recipe(r));
  });
  after(async () => {
    await g?.stop();
  });

  /** The object on cluster2 once `holds` says it is as expected. */
  const onCluster2 = <T extends KubeObject>(ref: ResourceRef, namespace: string, name: string, what: string, holds: (o: T) => boolean): Promise<T> =>
    eventually(`${namespace}/${name} on cluster2 ${what}`, async () => {
      const o = await getOrUndefined<T>(c2(), ref, namespace, name);
      return o && holds(o) ? o : undefined;
    }, 90_000);

  /**
   * The copy as cluster2 holds it is what the controller wants: deciding as it does (on this
   * cluster, from the peer's source) it would write nothing, and it has not written it since.
   * A schema that stores something other than what we write would show here as an update due.
   */
  const settled = async (ruleName: string, ref: ResourceRef, copy: KubeObject): Promise<void> => {
    const { namespace = '', name = '', resourceVersion } = copy.metadata;
    const rule = await c2().get<ResourceSyncRule>(RULES, undefined, ruleName);
    const { rows } = await new Explainer(c2(), { network: 'default', namespace: SANDBOX_NAMESPACE }).explain(rule);
    const row = rows.find((r) => r.copy === `${copy.kind ?? ''} ${namespace}/${name}`);
    assert.deepEqual([row?.action, row?.reason], ['none', 'in sync'], `the copy ${namespace}/${name} is as the controller wants it: ${JSON.stringify(rows)}`);
    assert.equal((await c2().get(ref, namespace, name)).metadata.resourceVersion, resourceVersion, `the copy ${namespace}/${name} was not written again`);
  };

  /** Changes the source on cluster1 (a merge patch of it). */
  const change = (ref: ResourceRef, source: KubeObject, patch: object) => c1().patch(ref, source.metadata.namespace, source.metadata.name ?? '', 'merge', patch);

  it("shares each member's root certificate renamed after its cluster, following it to its deletion", async () => {
    const copy = await onCluster2<ConfigMap>(CONFIG_MAPS, 'istio-system', 'istio-ca-root-cert-cluster1', 'renamed and labelled', (o) => o.data?.['root-cert.pem'] === 'root of cluster1' && o.metadata.labels?.['mesh.example.com/trust-root'] === 'true');
    await settled('mesh-roots-sink', CONFIG_MAPS, copy);
    await eventually("cluster2's root on cluster1", async () => (await getOrUndefined<ConfigMap>(c1(), CONFIG_MAPS, 'istio-system', 'istio-ca-root-cert-cluster2'))?.data?.['root-cert.pem'] === 'root of cluster2', 90_000);
    await change(CONFIG_MAPS, rootCert('root of cluster1'), { data: { 'root-cert.pem': 'rotated root of cluster1' } });
    await settled('mesh-roots-sink', CONFIG_MAPS, await onCluster2<ConfigMap>(CONFIG_MAPS, 'istio-system', 'istio-ca-root-cert-cluster1', 'with the rotated root', (o) => o.data?.['root-cert.pem'] === 'rotated root of cluster1'));
    await c1().delete(CONFIG_MAPS, 'istio-system', 'istio-ca-root-cert');
    await goneFrom(c2(), 'cluster2', CONFIG_MAPS, 'istio-system', 'istio-ca-root-cert-cluster1', 90_000);
    assert.equal((await c2().get<ConfigMap>(CONFIG_MAPS, 'istio-system', 'istio-ca-root-cert')).data?.['root-cert.pem'], 'root of cluster2', "cluster2's own root is its own");
  });

  it("turns an exported ServiceEntry into one pointing at its member's east-west gateway, following the source and the gateway's address", async () => {
    const source = sample('ServiceEntry', 'payments');
    await c1().create(SERVICE_ENTRIES, 'shop', source);
    type Entry = Spec<{ ports: { number: number }[]; endpoints: { address: string; ports: Record<string, number> }[] }>;
    const address = (o: Entry) => o.spec.endpoints[0]?.address;
    const copy = await onCluster2<Entry>(SERVICE_ENTRIES, 'shop', 'payments-cluster1', "pointing at cluster1's gateway", (o) => address(o) === '198.51.100.1');
    assert.deepEqual(copy.spec, { ...(source as Entry).spec, endpoints: [{ address: '198.51.100.1', ports: { http: 15443 } }] });
    await settled('exported-services-sink', SERVICE_ENTRIES, copy);
    await change(SERVICE_ENTRIES, source, { spec: { ports: [{ number: 8080, name: 'http', protocol: 'HTTP' }] } });
    await onCluster2<Entry>(SERVICE_ENTRIES, 'shop', 'payments-cluster1', 'on the new port', (o) => o.spec.ports[0]?.number === 8080 && address(o) === '198.51.100.1');
    // The gateway moves: the template reads the registry, so the copy follows its Cluster.
    await c1().patch(CLUSTERS, undefined, 'cluster1', 'merge', { metadata: { annotations: { 'mesh.example.com/east-west-gateway': '198.51.100.11' } } });
    await settled('exported-services-sink', SERVICE_ENTRIES, await onCluster2<Entry>(SERVICE_ENTRIES, 'shop', 'payments-cluster1', "pointing at cluster1's new gateway address", (o) => address(o) === '198.51.100.11'));
    await c1().delete(SERVICE_ENTRIES, 'shop', 'payments');
    await goneFrom(c2(), 'cluster2', SERVICE_ENTRIES, 'shop', 'payments-cluster1', 90_000);
  });

  it("renames an exported service's DestinationRule after its member, following it to its deletion", async () => {
    const source = sample('DestinationRule', 'payments');
    await c1().create(DESTINATION_RULES, 'shop', source);
    type Rule = Spec<{ trafficPolicy?: { loadBalancer?: { simple?: string } } }>;
    const copy = await onCluster2<Rule>(DESTINATION_RULES, 'shop', 'payments-cluster1', 'renamed', () => true);
    assert.deepEqual(copy.spec, (source as Rule).spec);
    await settled('exported-policies-sink', DESTINATION_RULES, copy);
    await change(DESTINATION_RULES, source, { spec: { trafficPolicy: { loadBalancer: { simple: 'LEAST_REQUEST' } } } });
    await settled('exported-policies-sink', DESTINATION_RULES, await onCluster2<Rule>(DESTINATION_RULES, 'shop', 'payments-cluster1', 'balancing to the least loaded', (o) => o.spec.trafficPolicy?.loadBalancer?.simple === 'LEAST_REQUEST'));
    await c1().delete(DESTINATION_RULES, 'shop', 'payments');
    await goneFrom(c2(), 'cluster2', DESTINATION_RULES, 'shop', 'payments-cluster1', 90_000);
  });

  it("gives every member the east-west Gateway under its name, selecting that member's network, following it to its deletion", async () => {
    const source = sample('Gateway', 'cross-network-gateway');
    await c1().create(GATEWAYS, 'istio-system', source);
    type Gateway = Spec<{ selector: Record<string, string>; servers: { hosts: string[] }[] }>;
    const copy = await onCluster2<Gateway>(GATEWAYS, 'istio-system', 'cross-network-gateway', "selecting cluster2's network", (o) => o.spec.selector['topology.istio.io/network'] === 'network2');
    assert.deepEqual(copy.spec.selector, { istio: 'eastwestgateway', 'topology.istio.io/network': 'network2' });
    await settled('east-west-gateway-sink', GATEWAYS, copy);
    const servers = (source as Gateway).spec.servers.map((s) => ({ ...s, hosts: [...s.hosts, '*.global'] }));
    await change(GATEWAYS, source, { spec: { servers } });
    await settled('east-west-gateway-sink', GATEWAYS, await onCluster2<Gateway>(GATEWAYS, 'istio-system', 'cross-network-gateway', 'passing *.global through too', (o) => o.spec.servers[0]?.hosts.includes('*.global') === true));
    await c1().delete(GATEWAYS, 'istio-system', 'cross-network-gateway');
    await goneFrom(c2(), 'cluster2', GATEWAYS, 'istio-system', 'cross-network-gateway', 90_000);
  });

  it("reports on the rule the mTLS copy Istio's schema refuses, makes it once the annotation is fixed, and follows it to its deletion", async () => {
    const source = sample('PeerAuthentication', 'default');
    await c1().create(PEER_AUTHENTICATIONS, 'istio-system', source);
    const refusal = /the API server refused the copy: 422 Invalid: PeerAuthentication\.security\.istio\.io "default" is invalid: \[?spec\.mtls\.mode: Unsupported value: "strict"/;
    await eventually("cluster2's rule to report the copy refused", async () => {
      const r = await c2().get<ResourceSyncRule>(RULES, undefined, 'mesh-mtls-sink');
      const peer = r.status?.clusters?.find((c) => c.name === 'cluster1');
      const synced = r.status?.conditions?.find((c) => c.type === 'Synced');
      return (peer?.failed ?? 0) >= 1 && refusal.test(peer?.lastError ?? '') && synced?.status === 'False' && refusal.test(synced.message);
    }, 90_000);
    await eventually('a Warning Event on the rule on cluster2', async () => (await allEvents(c2())).some((e) => e.involvedObject?.name === 'mesh-mtls-sink' && e.type === 'Warning' && refusal.test(e.message ?? '')));
    assert.equal(await getOrUndefined(c2(), PEER_AUTHENTICATIONS, 'istio-system', 'default'), undefined, 'nothing written');

    // The annotation goes: the copy takes the source's mode.
    await c2().patch(CLUSTERS, undefined, 'cluster2', 'merge', { metadata: { annotations: { 'mesh.example.com/mtls-mode': null } } });
    type Policy = Spec<{ mtls: { mode: string } }>;
    const copy = await onCluster2<Policy>(PEER_AUTHENTICATIONS, 'istio-system', 'default', 'STRICT', (o) => o.spec.mtls.mode === 'STRICT');
    await settled('mesh-mtls-sink', PEER_AUTHENTICATIONS, copy);
    await eventually("cluster2's rule Synced again", async () => (await c2().get<ResourceSyncRule>(RULES, undefined, 'mesh-mtls-sink')).status?.conditions?.find((c) => c.type === 'Synced')?.status === 'True');
    await change(PEER_AUTHENTICATIONS, source, { spec: { mtls: { mode: 'PERMISSIVE' } } });
    await settled('mesh-mtls-sink', PEER_AUTHENTICATIONS, await onCluster2<Policy>(PEER_AUTHENTICATIONS, 'istio-system', 'default', 'PERMISSIVE', (o) => o.spec.mtls.mode === 'PERMISSIVE'));
    await c1().delete(PEER_AUTHENTICATIONS, 'istio-system', 'default');
    await goneFrom(c2(), 'cluster2', PEER_AUTHENTICATIONS, 'istio-system', 'default', 90_000);
  });
});
