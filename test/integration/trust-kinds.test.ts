// Every kind a real API server of our Kubernetes version serves, alpha and beta groups included,
// is classified by the trust boundary's kind table (synced, or refused with its reason): a kind
// added by a newer Kubernetes is never synced unclassified.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { builtinKindClass } from '../../src/core/trust/index.ts';
import { ClusterConfig } from '../../src/kube/config.ts';
import { RestClient } from '../../src/kube/rest.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';

interface ResourceList {
  resources: { name: string; kind: string }[];
}

describe('trust boundary kinds', () => {
  let sandbox: Sandbox;
  let rest: RestClient;

  before(async () => {
    sandbox = await startSandbox({ clusters: 1, controllerManager: false, apiserverArgs: ['--runtime-config=api/all=true'] });
    rest = await RestClient.fromConfig(ClusterConfig.fromString(sandbox.clusters[0]!.kubeconfig));
  });
  after(async () => {
    rest?.close();
    await sandbox?.stop();
  });

  it('classifies every kind the API server serves, in every group and version', async () => {
    const served: { group: string; kind: string; at: string }[] = [];
    const core = await rest.json<ResourceList>({ method: 'GET', path: '/api/v1' });
    for (const r of core.resources) if (!r.name.includes('/')) served.push({ group: '', kind: r.kind, at: 'v1' });
    const groups = await rest.json<{ groups: { name: string; versions: { groupVersion: string }[] }[] }>({ method: 'GET', path: '/apis' });
    for (const g of groups.groups) {
      for (const v of g.versions) {
        const list = await rest.json<ResourceList>({ method: 'GET', path: `/apis/${v.groupVersion}` });
        for (const r of list.resources) if (!r.name.includes('/')) served.push({ group: g.name, kind: r.kind, at: v.groupVersion });
      }
    }
    // The server serves alpha and beta groups too, so the table is checked against all of them.
    assert.ok(served.some((s) => s.at.includes('alpha')), 'alpha versions are served');
    assert.ok(served.length > 60, `${served.length} kinds served`);
    const unclassified = served.filter((s) => builtinKindClass(s.group, s.kind) === undefined);
    assert.deepEqual(unclassified.map((s) => `${s.kind} (${s.at})`), []);
  });
});
