// `cluster-registry dashboard` in a real headless Chromium (Debian's, which `make test` installs
// where it is missing): the page shows the group as cluster1 sees it, in tables and in the picture
// of who sees whom, and follows it live, as rules sync objects, fail, and a peer goes away and
// comes back; and an object picked from a rule traced across the group. Screenshots are kept under
// .cache/artifacts/.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CLUSTER_FEATURES, CLUSTERS, SECRETS } from '../../src/core/api/resources.ts';
import type { RestClient } from '../../src/kube/index.ts';
import { PACKAGE_ROOT } from '../../src/sandbox/index.ts';
import { ManagedProcess } from '../../src/sandbox/process.ts';
import { eventually } from '../support/eventually.ts';
import { CLI } from '../support/process.ts';
import { groupCredentials } from '../support/security-checks.ts';
import { RULES, SANDBOX_NAMESPACE, rule, secret, startSyncGroup, waitGroupFormed, type SyncGroup } from '../support/sync-helpers.ts';

const CHROMIUM = process.env['CHROMIUM'] ?? '/usr/bin/chromium';
const NS = SANDBOX_NAMESPACE;
const ARTIFACTS = join(PACKAGE_ROOT, '.cache', 'artifacts');
// Headless, and quiet on a machine without internet: no background fetches, no sync, no updates.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The CLI's dashboard for `kubeconfig` on a free port, dying with this process; its output goes to `log`. */
function dashboardProcess(kubeconfig: string, log: string): ManagedProcess {
  return new ManagedProcess({ name: 'dashboard', binary: process.execPath, args: [CLI, 'dashboard', '--kubeconfig', kubeconfig, '--port', '0'], logFile: log, detached: false });
}

/** The text of a cell of the page, '' while it is not there. */
async function cell(page: Page, row: string, field: string): Promise<string> {
  const l = page.locator(`tr${row} td[data-field="${field}"]`);
  return (await l.count()) === 1 ? ((await l.textContent()) ?? '') : '';
}

function shows(page: Page, row: string, field: string, want: (text: string) => boolean, what: string, timeoutMs = 60_000): Promise<true> {
  return eventually(`the page to show ${what}`, async () => want(await cell(page, row, field)) || undefined, timeoutMs);
}

/** The picture's arrow for `from`'s view of `to`: its state and its tooltip, '' while it is not drawn. */
async function arrow(page: Page, from: string, to: string): Promise<{ state: string; title: string }> {
  const l = page.locator(`#graph path.edge[data-from="${from}"][data-to="${to}"]`);
  if ((await l.count()) !== 1) return { state: '', title: '' };
  return { state: (await l.getAttribute('data-state')) ?? '', title: (await l.locator('title').textContent()) ?? '' };
}

function sees(page: Page, from: string, to: string, state: string, timeoutMs = 60_000): Promise<true> {
  return eventually(`the picture to show ${from}'s view of ${to} ${state}`, async () => (await arrow(page, from, to)).state === state || undefined, timeoutMs);
}

describe('dashboard in a real browser', () => {
  let g: SyncGroup | undefined;
  let dashboard: ManagedProcess | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: install Debian's chromium package (make browser), or set CHROMIUM`);
    g = await startSyncGroup(2, { name: 'dashboard' });
    await waitGroupFormed(g);
  });
  after(async () => {
    // The page as it was last, passed or failed; then everything goes, whatever fails on the way.
    mkdirSync(ARTIFACTS, { recursive: true });
    await Promise.allSettled([page?.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true })]);
    await Promise.allSettled([browser?.close(), dashboard?.kill()]);
    await g?.stop();
  });

  it('shows the members, the rules with what they synced and their errors, live, and says when it lost the server', async () => {
    const group = g!;
    const log = join(group.sandbox.dir, 'dashboard.log');
    const server = dashboardProcess(group.sandbox.cluster('cluster1').kubeconfigPath, log);
    dashboard = server;
    server.start();
    const url = await eventually(
      'the dashboard to say where it serves',
      () => {
        assert.ok(server.running, `the dashboard exited: ${server.logTail()}`);
        return /(http:\/\/\S+)/.exec(readFileSync(log, 'utf8'))?.[1];
      },
      30_000,
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const tab = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page = tab;
    const problems: string[] = [];
    tab.on('pageerror', (e) => problems.push(e.message));
    // A script or style the page's policy refused shows as a console error too.
    tab.on('console', (m) => void (m.type() === 'error' && problems.push(`${m.text()} (${m.location().url})`)));
    const opened = await tab.goto(url);
    // The token goes from the URL to the page's sessionStorage; no cookie carries it to other ports of this host.
    assert.equal(opened?.status(), 200);
    assert.equal((await opened?.allHeaders())?.['set-cookie'], undefined);
    await eventually('the token to leave the address bar', () => !new URL(tab.url()).searchParams.has('token') || undefined, 10_000);

    // The members and their health.
    await shows(tab, '[data-cluster="cluster1"]', 'type', (t) => t === 'Local', 'cluster1 as the local member');
    await shows(tab, '[data-cluster="cluster2"]', 'state', (t) => t === 'Ready', 'cluster2 Ready');
    assert.equal(await tab.locator('#viewer').textContent(), 'cluster1');
    assert.equal(await tab.locator('#connection').textContent(), 'live');
    // The picture: each member's view of the other, cluster1's its own, cluster2's as cluster1 read it there.
    await sees(tab, 'cluster1', 'cluster2', 'Ready');
    await sees(tab, 'cluster2', 'cluster1', 'Ready');
    assert.equal(await tab.locator('#graph [data-member="cluster1"][data-local]').count(), 1);
    assert.equal(await tab.locator('#graph path.edge').count(), 2);

    // A rule appears, then counts what it synced from cluster2 as the objects arrive and go; the
    // picture, which those frames do not change, is not drawn again.
    await tab.locator('#graph svg').evaluate((e) => e.setAttribute('data-test-kept', ''));
    await group.client('cluster1').create(RULES, undefined, rule('dashboard-secrets', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: { dashboard: 'shown' } }] }] }] }));
    await shows(tab, '[data-rule="dashboard-secrets"]:not(.peer)', 'kind', (t) => t === 'v1/Secret', 'the new rule');
    for (const i of [1, 2, 3]) await group.client('cluster2').create(SECRETS, NS, secret(NS, `dashboard-${i}`, { k: 'v' }, { labels: { dashboard: 'shown' } }));
    await shows(tab, '[data-rule="dashboard-secrets"]:not(.peer)', 'synced', (t) => t === '3', 'three objects synced by the rule');
    await shows(tab, '[data-rule="dashboard-secrets"][data-peer="cluster2"]', 'state', (t) => t === 'Active', 'the rule active on cluster2');
    await group.client('cluster2').delete(SECRETS, NS, 'dashboard-3');
    await shows(tab, '[data-rule="dashboard-secrets"]:not(.peer)', 'synced', (t) => t === '2', 'the count going down after a delete');
    assert.equal(await tab.locator('#graph svg[data-test-kept]').count(), 1, 'the picture drawn once for frames that do not change it');

    // One of the rule's objects, picked from the rule, traced across the group: its source on
    // cluster2, read with the credentials cluster1 holds for it, and cluster1's copy, in sync.
    await tab.locator('[data-rule="dashboard-secrets"]:not(.peer) button.pick').click();
    const copy = tab.locator('#rule-objects button[data-name="dashboard-1"]');
    await eventually('the rule to list its copy', async () => (await copy.count()) === 1 || undefined, 30_000);
    assert.equal(await copy.getAttribute('data-role'), 'copy');
    assert.equal(await copy.textContent(), `copy Secret ${NS}/dashboard-1 from cluster2`);
    assert.equal(await tab.locator('#rule-objects button[data-name="dashboard-3"]').count(), 0, 'a deleted copy is not offered');
    await copy.click();
    const traced = async (member: string, field = 'state'): Promise<string> => {
      const l = tab.locator(`#trace tr[data-member="${member}"]:not(.diff) td[data-field="${field}"]`);
      return (await l.count()) === 1 ? ((await l.textContent()) ?? '') : '';
    };
    await eventually('the trace of dashboard-1', async () => ((await traced('cluster2')) === 'source' && (await traced('cluster1')) === 'in sync') || undefined, 60_000);
    assert.equal(await tab.locator('#trace-status').getAttribute('data-outcome'), 'in sync');
    assert.match((await tab.locator('#trace-source').textContent()) ?? '', new RegExp(`^Its source is Secret ${NS}/dashboard-1 on cluster2, at version \\d+\\.$`));
    assert.equal(await traced('cluster1', 'seen'), 'first-hand');
    assert.equal(await traced('cluster2', 'seen'), 'inferred');
    mkdirSync(ARTIFACTS, { recursive: true });
    await tab.locator('#tracing').screenshot({ path: join(ARTIFACTS, 'dashboard-trace.png') });

    // A rule that cannot run says why, on the page.
    await group.client('cluster1').create(RULES, undefined, rule('dashboard-unserved', { groupVersionKind: { group: 'nope.example.com', version: 'v1', kind: 'Nope' }, rules: [{ match: [{}] }] }));
    await shows(tab, '[data-rule="dashboard-unserved"]:not(.peer)', 'state', (t) => t === 'Errors', 'the failing rule in error');
    await shows(tab, '[data-rule="dashboard-unserved"][data-peer="cluster2"]', 'message', (t) => t.includes('not served on the peer'), 'why it fails on cluster2');

    // Text from cluster objects is shown as text, never run as markup.
    const hostile = '<img src=x onerror="document.title=\'owned\'">';
    await group.client('cluster1').create(CLUSTER_FEATURES, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', metadata: { name: 'dashboard-hostile' }, spec: { featureName: hostile } });
    await shows(tab, '[data-feature="dashboard-hostile"]', 'featureName', (t) => t === hostile, 'the hostile feature name as plain text');
    // So is an entry's message, in the picture too: this entry names its credentials in a namespace
    // whose name is markup. cluster2 takes no copy of an entry its cluster did not write, and what
    // the new member sees cluster1 cannot read.
    await group.client('cluster1').create(CLUSTERS, undefined, {
      apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'dashboard-hostile' },
      spec: { clusterID: 'dashboard-hostile-id', authInfo: { secretRef: { name: 'x', namespace: hostile } } },
    });
    await sees(tab, 'cluster1', 'dashboard-hostile', 'CredentialsInvalid');
    assert.ok((await arrow(tab, 'cluster1', 'dashboard-hostile')).title.includes(`namespace ${hostile}:`), 'the message as plain text in the tooltip');
    await shows(tab, '[data-from="cluster1"][data-to="dashboard-hostile"]', 'reason', (t) => t.includes(`namespace ${hostile}:`), "the hostile message as plain text among the views not Ready");
    await sees(tab, 'cluster2', 'dashboard-hostile', 'NotSynced');
    await sees(tab, 'dashboard-hostile', 'cluster1', 'Unknown');
    assert.equal(await tab.locator('img').count(), 0);
    assert.notEqual(await tab.title(), 'owned');
    await group.client('cluster1').delete(CLUSTERS, undefined, 'dashboard-hostile');
    await eventually('the picture to drop the entry', async () => (await tab.locator('#graph [data-member="dashboard-hostile"]').count()) === 0 || undefined);

    // A peer that goes away, and comes back.
    const apiserver = group.sandbox.cluster('cluster2').apiserver;
    apiserver.pause();
    try {
      await shows(tab, '[data-cluster="cluster2"]', 'state', (t) => t !== 'Ready' && t !== '', 'cluster2 no longer Ready while its API server is paused');
      // One-sided as far as cluster1 can tell: it cannot reach cluster2, nor read how cluster2 sees it.
      await sees(tab, 'cluster1', 'cluster2', 'Unreachable');
      await sees(tab, 'cluster2', 'cluster1', 'Unknown');
    } finally {
      apiserver.resume();
    }
    await shows(tab, '[data-cluster="cluster2"]', 'state', (t) => t === 'Ready', 'cluster2 Ready again', 90_000);
    await sees(tab, 'cluster1', 'cluster2', 'Ready');
    await sees(tab, 'cluster2', 'cluster1', 'Ready');

    // Reloaded without the token in its URL, the page still has it, from this tab's sessionStorage.
    await tab.reload();
    await shows(tab, '[data-cluster="cluster2"]', 'state', (t) => t === 'Ready', 'cluster2 Ready after a reload');
    assert.equal(await tab.locator('#connection').textContent(), 'live');

    // The page's data goes only to requests that carry the token in their header: not to a request
    // without it, nor to one with it in the URL.
    const token = new URL(url).searchParams.get('token') ?? assert.fail('the printed URL holds no token');
    const origin = new URL(url).origin;
    for (const path of ['api/view', `api/view?token=${token}`, 'api/events']) {
      const denied = await fetch(new URL(path, origin), { signal: AbortSignal.timeout(10_000) });
      assert.equal(denied.status, 401, path);
      assert.doesNotMatch(await denied.text(), /cluster1/, path);
    }
    assert.equal(await tab.evaluate(async () => (await fetch('api/view')).status), 401);
    assert.deepEqual(await tab.context().cookies(), []);

    // Neither the page's data nor the dashboard's output holds a credential of the group.
    const view = await tab.evaluate(async () => (await fetch('api/view', { headers: { Authorization: `Bearer ${sessionStorage.getItem('cluster-registry-dashboard-token') ?? ''}` } })).text());
    assert.match(view, /"viewer":"cluster1"/);
    const clients = new Map<string, RestClient>(group.names.map((n) => [n, group.client(n)]));
    for (const [credential, what] of await groupCredentials(group.sandbox, clients)) {
      assert.ok(!view.includes(credential), `the page's data holds ${what}`);
      assert.ok(!readFileSync(log, 'utf8').includes(credential), `the dashboard's output holds ${what}`);
    }

    // Stopped, the dashboard exits cleanly, and the page says it is no longer live.
    await server.stop();
    assert.equal(await server.waitForExit(), 0);
    await eventually('the page to say it lost the dashboard', async () => (await tab.locator('#connection').textContent()) === 'disconnected' || undefined, 30_000);
    // The only errors the browser may report are about the stream it can no longer reach, and the refused request above.
    assert.deepEqual(problems.filter((p) => !p.includes('api/events') && !/401 \(Unauthorized\).*api\/view/.test(p)), []);
  });
});
