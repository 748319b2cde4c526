// The library example (examples/library/hub-sync.ts) run as a team would run it: its own kind on
// two bare clusters (no controller anywhere), in this process, stopped by its signal.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { syncDatabases } from '../../examples/library/hub-sync.ts';
import type { KubeObject } from '../../src/core/api/types.ts';
import type { HubSync } from '../../src/hub/index.ts';
import type { ResourceRef, RestClient } from '../../src/kube/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { adminClient, startGroup } from '../../src/testbed/group.ts';
import { eventually } from '../support/eventually.ts';
import { CRDS, ensureNamespace, freshLogDir, getOrUndefined } from '../support/sync-helpers.ts';

const DATABASES: ResourceRef = { group: 'example.com', version: 'v1', resource: 'databases' };
type Database = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

describe('hub-and-spoke as a library (the example, on two bare clusters)', () => {
  let sandbox: Sandbox | undefined;
  let hub: RestClient;
  let local: RestClient;

  before(async () => {
    sandbox = await startGroup({ dir: freshLogDir('hub-library'), clusters: 2, controllers: false });
    [hub, local] = await Promise.all(sandbox.clusters.map((c) => adminClient(c))) as [RestClient, RestClient];
    for (const rest of [hub, local]) {
      await rest.create(CRDS, undefined, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'databases.example.com' },
        spec: { group: 'example.com', names: { kind: 'Database', plural: 'databases', singular: 'database', listKind: 'DatabaseList' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
      });
      await eventually('databases served', async () => (await rest.list(DATABASES)).items);
    }
    await ensureNamespace(hub, 'shop-eu1');
  });
  after(async () => {
    hub?.close();
    local?.close();
    await sandbox?.stop();
  });

  it('takes the region’s Databases from the hub and reports their status, until stopped', async () => {
    const stop = new AbortController();
    let sync: HubSync | undefined;
    const running = syncDatabases({ hubKubeconfig: sandbox!.cluster('cluster1').kubeconfigPath, localKubeconfig: sandbox!.cluster('cluster2').kubeconfigPath, suffix: '-eu1' }, stop.signal, (s) => (sync = s));
    try {
      await hub.create(DATABASES, 'shop-eu1', { apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'orders-eu1', namespace: 'shop-eu1' }, spec: { engine: 'postgres' } });
      await hub.create(DATABASES, 'shop-eu1', { apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'orders-us1', namespace: 'shop-eu1' }, spec: { engine: 'postgres' } });
      const mine = await eventually('the region’s Database here', () => getOrUndefined<Database>(local, DATABASES, 'shop', 'orders'));
      assert.deepEqual(mine.spec, { engine: 'postgres' });
      await local.patchStatus(DATABASES, 'shop', 'orders', 'merge', { status: { phase: 'Available' } });
      await eventually('the status on the hub', async () => (await getOrUndefined<Database>(hub, DATABASES, 'shop-eu1', 'orders-eu1'))?.status?.['phase'] === 'Available');
      assert.equal(await getOrUndefined(local, DATABASES, 'shop', 'orders-us1'), undefined, "another region's Database stays on the hub");
      assert.deepEqual(sync?.counts().failed, 0);
    } finally {
      stop.abort();
      await running;
    }
  });
});
