// `cluster-registry dashboard` in a real headless Chromium (Debian's, which `make test` installs
// where it is missing): the page shows the group as cluster1 sees it and follows it live, as
// rules sync objects, fail, and a peer goes away and comes back. A screenshot is kept under
// .cache/artifacts/.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CLUSTER_FEATURES, SECRETS } from '../../src/core/api/resources.ts';
import { PACKAGE_ROOT } from '../../src/sandbox/index.ts';
import { eventually } from '../support/eventually.ts';
import { RULES, SANDBOX_NAMESPACE, rule, secret, startSyncGroup, waitGroupFormed, type SyncGroup } from '../support/sync-helpers.ts';

const CHROMIUM = process.env['CHROMIUM'] ?? '/usr/bin/chromium';
const CLI = fileURLToPath(new URL('../../bin/cluster-registry.js', import.meta.url));
const NS = SANDBOX_NAMESPACE;
// Headless, and quiet on a machine without internet: no background fetches, no sync, no updates.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Starts the CLI's dashboard for `kubeconfig` on a free port; resolves with the process and its URL. */
async function startDashboard(kubeconfig: string): Promise<{ process: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'dashboard', '--kubeconfig', kubeconfig, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit').then(([code]) => assert.fail(`the dashboard exited (${String(code)}) before saying where it serves`));
  const line = (async () => {
    for await (const l of createInterface({ input: child.stdout })) {
      const url = /(http:\/\/\S+)/.exec(l)?.[1];
      if (url) return url;
    }
    return assert.fail('the dashboard closed its output before saying where it serves');
  })();
  try {
    return { process: child, url: await Promise.race([line, exited]) };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

/** The text of a cell of the page, '' while it is not there. */
async function cell(page: Page, row: string, field: string): Promise<string> {
  const l = page.locator(`tr${row} td[data-field="${field}"]`);
  return (await l.count()) === 1 ? ((await l.textContent()) ?? '') : '';
}

function shows(page: Page, row: string, field: string, want: (text: string) => boolean, what: string, timeoutMs = 60_000): Promise<true> {
  return eventually(`the page to show ${what}`, async () => want(await cell(page, row, field)) || undefined, timeoutMs);
}

describe('dashboard in a real browser', () => {
  let g: SyncGroup | undefined;
  let dashboard: ChildProcess | undefined;
  let browser: Browser | undefined;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: install Debian's chromium package (make browser), or set CHROMIUM`);
    g = await startSyncGroup(2, { name: 'dashboard' });
    await waitGroupFormed(g);
  });
  after(async () => {
    await browser?.close();
    dashboard?.kill('SIGKILL');
    await g?.stop();
  });

  it('shows the members, the rules with what they synced and their errors, live, and says when it lost the server', async () => {
    const group = g!;
    const started = await startDashboard(group.sandbox.cluster('cluster1').kubeconfigPath);
    dashboard = started.process;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(started.url);

    // The members and their health.
    await shows(page, '[data-cluster="cluster1"]', 'type', (t) => t === 'Local', 'cluster1 as the local member');
    await shows(page, '[data-cluster="cluster2"]', 'state', (t) => t === 'Ready', 'cluster2 Ready');
    assert.equal(await page.locator('#viewer').textContent(), 'cluster1');
    assert.equal(await page.locator('#connection').textContent(), 'live');

    // A rule appears, then counts what it synced from cluster2 as the objects arrive.
    await group.client('cluster1').create(RULES, undefined, rule('dashboard-secrets', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: { dashboard: 'shown' } }] }] }] }));
    await shows(page, '[data-rule="dashboard-secrets"]:not(.peer)', 'kind', (t) => t === 'v1/Secret', 'the new rule');
    for (const i of [1, 2, 3]) await group.client('cluster2').create(SECRETS, NS, secret(NS, `dashboard-${i}`, { k: 'v' }, { labels: { dashboard: 'shown' } }));
    await shows(page, '[data-rule="dashboard-secrets"]:not(.peer)', 'synced', (t) => t === '3', 'three objects synced by the rule');
    await shows(page, '[data-rule="dashboard-secrets"][data-peer="cluster2"]', 'state', (t) => t === 'Active', 'the rule active on cluster2');
    await group.client('cluster2').delete(SECRETS, NS, 'dashboard-3');
    await shows(page, '[data-rule="dashboard-secrets"]:not(.peer)', 'synced', (t) => t === '2', 'the count going down after a delete');

    // A rule that cannot run says why, on the page.
    await group.client('cluster1').create(RULES, undefined, rule('dashboard-unserved', { groupVersionKind: { group: 'nope.example.com', version: 'v1', kind: 'Nope' }, rules: [{ match: [{}] }] }));
    await shows(page, '[data-rule="dashboard-unserved"]:not(.peer)', 'state', (t) => t === 'Errors', 'the failing rule in error');
    await shows(page, '[data-rule="dashboard-unserved"][data-peer="cluster2"]', 'message', (t) => t.includes('not served on the peer'), 'why it fails on cluster2');

    // Text from cluster objects is shown as text, never run as markup.
    const hostile = '<img src=x onerror="document.title=\'owned\'">';
    await group.client('cluster1').create(CLUSTER_FEATURES, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', metadata: { name: 'dashboard-hostile' }, spec: { featureName: hostile } });
    await shows(page, '[data-feature="dashboard-hostile"]', 'featureName', (t) => t === hostile, 'the hostile feature name as plain text');
    assert.equal(await page.locator('#features img').count(), 0);
    assert.equal(await page.title(), 'cluster-registry');

    // A peer that goes away, and comes back.
    const apiserver = group.sandbox.cluster('cluster2').apiserver;
    apiserver.pause();
    try {
      await shows(page, '[data-cluster="cluster2"]', 'state', (t) => t !== 'Ready' && t !== '', 'cluster2 no longer Ready while its API server is paused');
    } finally {
      apiserver.resume();
    }
    await shows(page, '[data-cluster="cluster2"]', 'state', (t) => t === 'Ready', 'cluster2 Ready again', 90_000);

    const artifacts = join(PACKAGE_ROOT, '.cache', 'artifacts');
    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: join(artifacts, 'dashboard.png'), fullPage: true });

    // Interrupted, the dashboard exits cleanly, and the page says it is no longer live.
    dashboard.kill('SIGINT');
    const [code] = (await once(dashboard, 'exit')) as [number | null];
    assert.equal(code, 0);
    await eventually('the page to say it lost the dashboard', async () => (await page.locator('#connection').textContent()) === 'disconnected' || undefined, 30_000);
    assert.deepEqual(pageErrors, []);
  });
});
