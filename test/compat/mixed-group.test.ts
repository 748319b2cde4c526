// Groups that mix upstream's Go controller v0.2.12 with ours, formed by hand as upstream's
// quickstart says (each member swaps its Cluster and Secret with one member, the hub), or with
// our `join` between a Go member and ours: the group
// forms transitively whichever controller the hub runs, every member sees every other Ready, a
// rotated reader token of ours reaches a Go member that received our Secret through the group,
// and user rules (Secrets everywhere, ClusterFeature-gated, resource-sync-disabled, a custom
// resource renamed by a template with its status) have the same outcome whichever controller wrote
// the copy.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { SECRETS, secretText, type Secret } from '../../src/core/api/resources.ts';
import type { ResourceSyncRule } from '../../src/core/api/types.ts';
import { eventually } from '../support/eventually.ts';
import { cli } from '../support/process.ts';
import { FEATURES, getOrUndefined, grantKinds, installWidgets, renamedWidgetFollows, renamingWidgetRule, rule, RULES, SYNC_DISABLED, waitGroupFormed, SANDBOX_NAMESPACE, secret, waitGone, waitSecretValue, type SyncGroup } from '../support/sync-helpers.ts';
import { startMixedGroup, type MixedGroupOptions } from '../support/upstream.ts';

const OWNER = 'cluster-registry.k8s.cisco.com/resource-owner-cluster-id';
const tokenOf = (s: Secret | undefined): string => (parse(secretText(s ?? { metadata: {} }, 'kubeconfig') ?? '') as { users?: { user?: { token?: string } }[] } | null)?.users?.[0]?.user?.token ?? '';

/** A rule created on `on`, once the core rules carried it to every other member. */
async function ruleEverywhere(g: SyncGroup, on: string, r: ResourceSyncRule): Promise<void> {
  const name = r.metadata.name ?? '';
  await g.client(on).create(RULES, undefined, r);
  await eventually(`rule ${name} on every member`, async () => {
    for (const n of g.names) if (!(await getOrUndefined(g.client(n), RULES, undefined, name))) return false;
    return true;
  }, 120_000);
}

/** The Secret copied from `from` to every other member, each copy naming `from` as owner; then changed on `from` and deleted there. */
async function syncedFrom(g: SyncGroup, from: string, label: string): Promise<void> {
  const id = (await g.client(from).get<{ metadata: { uid?: string } }>({ group: '', version: 'v1', resource: 'namespaces' }, undefined, 'kube-system')).metadata.uid;
  const name = `from-${from}`;
  await g.client(from).create(SECRETS, 'default', secret('default', name, { v: '1' }, { labels: { share: label } }));
  for (const to of g.names.filter((n) => n !== from)) {
    const copy = await waitSecretValue(g, to, 'default', name, 'v', '1', 120_000);
    assert.equal(copy.metadata.annotations?.[OWNER], id, `${to}'s copy names ${from} as its owner`);
  }
  const current = await g.client(from).get<Secret>(SECRETS, 'default', name);
  await g.client(from).update(SECRETS, 'default', { ...current, data: { v: Buffer.from('2').toString('base64') } });
  for (const to of g.names.filter((n) => n !== from)) await waitSecretValue(g, to, 'default', name, 'v', '2', 120_000);
  await g.client(from).delete(SECRETS, 'default', name);
  for (const to of g.names.filter((n) => n !== from)) await waitGone(g, to, SECRETS, 'default', name, 120_000);
}

/** Once the group formed, a Secret rule made on one member moves Secrets made on each source member to every other. */
async function secretRuleAcross(g: SyncGroup, o: { ruleOn: string; label: string; sources: readonly string[] }): Promise<void> {
  await waitGroupFormed(g);
  await grantKinds(g, 'mixed-secrets', '', ['secrets']);
  await ruleEverywhere(g, o.ruleOn, rule(o.label, { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: ['default'], labels: [{ matchLabels: { share: o.label } }] }] }] }));
  for (const from of o.sources) await syncedFrom(g, from, o.label);
}

/** Starts the group before the suite's tests and stops it after them; returns its accessor. */
function mixedGroupForSuite(opts: MixedGroupOptions): () => SyncGroup {
  let g: SyncGroup | undefined;
  before(async () => {
    g = await startMixedGroup(opts);
  });
  after(async () => {
    await g?.stop();
  });
  return () => g ?? assert.fail('the group did not start');
}

describe('mixed group: upstream as the member everyone swaps with', () => {
  const group = mixedGroupForSuite({ name: 'mixed-upstream-hub', names: ['go', 'a', 'b'], upstream: ['go'], hub: 'go', ourArgs: ['--peer-health-interval=1s'] });

  it('forms transitively through the Go member: every member sees every other Ready', async () => {
    await waitGroupFormed(group());
  });

  it('`status` on a member of ours tells the Go member apart and says what the group needs', async () => {
    const g = group();
    await waitGroupFormed(g);
    const row = (name: string, controller: string) => new RegExp(`^${name}\\s+(Local|Peer)\\s+Ready\\s+\\S+\\s+v[\\d.]+\\s+${controller}\\s`, 'm');
    const out = await eventually('status to show every member with its controller', async () => {
      const r = await cli(['status', '--kubeconfig', g.sandbox.cluster('a').kubeconfigPath]);
      assert.equal(r.code, 0, r.stderr);
      return [row('go', 'other'), row('a', 'ours'), row('b', 'ours')].every((re) => re.test(r.stdout)) ? r.stdout : undefined;
    });
    assert.match(out, /^go runs another controller .*reader-for-upstream-peers\.yaml/m);
  });

  it('syncs a Secret rule in both directions: from the Go member, and from ours through it', async () => {
    await secretRuleAcross(group(), { ruleOn: 'go', label: 'share-hub', sources: ['go', 'a'] });
  });

  it('keeps a rule marked resource-sync-disabled where it was made: the Go member pulls with it, ours never receive it', async () => {
    const g = group();
    await waitGroupFormed(g);
    await grantKinds(g, 'mixed-secrets', '', ['secrets']);
    await g.client('a').create(SECRETS, 'default', secret('default', 'to-go', { v: 'a' }, { labels: { share: 'to-go' } }));
    await g.client('go').create(RULES, undefined, rule('to-go', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: ['default'], labels: [{ matchLabels: { share: 'to-go' } }] }] }] }, { [SYNC_DISABLED]: 'true' }));
    await waitSecretValue(g, 'go', 'default', 'to-go', 'v', 'a', 120_000);
    for (const n of ['a', 'b']) assert.equal(await getOrUndefined(g.client(n), RULES, undefined, 'to-go'), undefined, `${n} received the rule`);
    assert.equal(await getOrUndefined(g.client('b'), SECRETS, 'default', 'to-go'), undefined, 'b pulled with a rule it never had');
  });

  it('syncs through a ClusterFeature only from the member that advertises it, the Go member', async () => {
    const g = group();
    await waitGroupFormed(g);
    await grantKinds(g, 'mixed-secrets', '', ['secrets']);
    for (const on of ['go', 'b']) await g.client(on).create(SECRETS, 'default', secret('default', `featured-${on}`, { v: on }, { labels: { share: 'featured' } }));
    await ruleEverywhere(g, 'a', rule('featured', { clusterFeatureMatch: [{ featureName: 'mixed-feature' }], groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: ['default'], labels: [{ matchLabels: { share: 'featured' } }] }] }] }));
    await g.client('go').create(FEATURES, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', metadata: { name: 'mixed-feature' }, spec: { featureName: 'mixed-feature' } });
    for (const to of ['a', 'b']) await waitSecretValue(g, to, 'default', 'featured-go', 'v', 'go', 120_000);
    // b advertises nothing: its Secret stays where it is, whichever controller runs the rule.
    for (const to of ['a', 'go']) assert.equal(await getOrUndefined(g.client(to), SECRETS, 'default', 'featured-b'), undefined, `${to} holds b's Secret`);
  });

  it('syncs a custom resource renamed by a template, with its status, from the Go member and from ours', async () => {
    const g = group();
    await waitGroupFormed(g);
    await installWidgets(g, 'widgets');
    await ruleEverywhere(g, 'a', renamingWidgetRule('mixed-widgets', 'widgets'));
    await renamedWidgetFollows(g, { from: 'go', to: ['a', 'b'], ns: 'widgets', name: 'gear' });
    await renamedWidgetFollows(g, { from: 'a', to: ['go', 'b'], ns: 'widgets', name: 'cog' });
  });
});

describe('mixed group: ours as the member everyone swaps with, upstream as another member', () => {
  // Our readers' tokens rotate every 20 s here (they live 10 min), so rotations happen during the test.
  const group = mixedGroupForSuite({ name: 'mixed-our-hub', names: ['hub', 'go', 'b'], upstream: ['go'], hub: 'hub', ourArgs: ['--peer-health-interval=1s', '--reader-token-ttl=10m', '--reader-token-refresh=20s'] });

  it('forms transitively through our member: every member sees every other Ready', async () => {
    await waitGroupFormed(group());
  });

  it('a rotated reader token of ours reaches the Go member, which received the Secret through the group', async () => {
    const g = group();
    await waitGroupFormed(g);
    const first = tokenOf(await g.client('b').get<Secret>(SECRETS, SANDBOX_NAMESPACE, 'b'));
    const rotated = await eventually("b's controller to rotate its reader token", async () => {
      const token = tokenOf(await g.client('b').get<Secret>(SECRETS, SANDBOX_NAMESPACE, 'b'));
      return token !== first && token;
    }, 90_000);
    await eventually("the Go member's copy of b's Secret to hold the rotated token", async () => tokenOf(await getOrUndefined<Secret>(g.client('go'), SECRETS, SANDBOX_NAMESPACE, 'b')) === rotated || undefined, 90_000);
  });

  it('syncs a Secret rule between the Go member and ours', async () => {
    await secretRuleAcross(group(), { ruleOn: 'b', label: 'share-spoke', sources: ['go', 'b'] });
  });
});

describe('mixed group: a Go member and ours put together with `join`', () => {
  const group = mixedGroupForSuite({ name: 'mixed-join', names: ['a', 'go'], upstream: ['go'], hub: 'a', swap: 'join', ourArgs: ['--peer-health-interval=1s'] });

  it('forms: each sees the other Ready, and a Secret rule syncs both ways', async () => {
    await secretRuleAcross(group(), { ruleOn: 'a', label: 'share-joined', sources: ['go', 'a'] });
  });
});
