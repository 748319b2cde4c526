// The product as a user drives it, from the CLI: `sandbox up` with controllers, `join`,
// `status`, then `sandbox down`; and the bare mode.
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { PACKAGE_ROOT, toolPath } from '../../src/sandbox/index.ts';
import { kubectlOk } from '../support/kubectl.ts';
import { alive, cli } from '../support/process.ts';

function recordedPids(dir: string): number[] {
  const state = JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')) as {
    etcd: { pid: number };
    clusters: { processes: { pid: number }[] }[];
  };
  return [state.etcd.pid, ...state.clusters.flatMap((c) => c.processes.map((p) => p.pid))];
}

describe('cluster-registry CLI', () => {
  const dirs: string[] = [];
  const newDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'crg-cli-'));
    dirs.push(d);
    return d;
  };
  after(async () => {
    // Whatever happened above, nothing outlives the test.
    for (const d of dirs) {
      if (existsSync(join(d, 'sandbox.json'))) await cli(['sandbox', 'down', '--dir', d]);
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('bare sandbox: up, kubectl against a cluster, status, down leaves no process behind', async () => {
    const dir = newDir();
    const up = await cli(['sandbox', 'up', '--clusters', '2', '--no-controllers', '--dir', dir]);
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stdout, /cluster2\s+https:\/\/127\.0\.0\.1:\d+/);
    assert.match(readFileSync(join(dir, 'env.sh'), 'utf8'), /export PATH=.*\.cache\/tools\/bin/);

    const ns = await kubectlOk(join(dir, 'cluster2.kubeconfig'), ['get', 'namespaces', '-o', 'name']);
    assert.match(ns, /namespace\/kube-system/);

    const status = await cli(['sandbox', 'status', '--dir', dir]);
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.equal(status.stdout.match(/kube-apiserver\s+\d+\s+running\s+true/g)?.length, 2);
    assert.equal(status.stdout.match(/kube-controller-manager\s+\d+\s+running/g)?.length, 2);
    assert.doesNotMatch(status.stdout, /cluster-registry-controller/);

    const pids = recordedPids(dir);
    assert.equal(pids.length, 5);
    for (const pid of pids) assert.equal(alive(pid), true);
    const down = await cli(['sandbox', 'down', '--dir', dir]);
    assert.equal(down.code, 0, down.stderr);
    for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} survived sandbox down`);
    assert.equal(existsSync(join(dir, 'sandbox.json')), false);
    assert.equal(existsSync(join(dir, 'cluster2.kubeconfig')), false);
  });

  it('sandbox with controllers, `join` twice (idempotent), `status` as a table and JSON and through kubectl, then `leave`', async () => {
    const dir = newDir();
    const up = await cli(['sandbox', 'up', '--clusters', '2', '--dir', dir]);
    assert.equal(up.code, 0, up.stderr);
    const kc = (n: string) => join(dir, `${n}.kubeconfig`);

    for (const round of [1, 2]) {
      const joined = await cli(['join', '--kubeconfig', kc('cluster1'), '--peer-kubeconfig', kc('cluster2'), '--timeout', '2m']);
      assert.equal(joined.code, 0, `join round ${round}: ${joined.stderr}`);
      assert.match(joined.stderr, /joined: cluster1 and cluster2 see each other Ready/);
      if (round === 2 && !/Cluster cluster1 unchanged/.test(joined.stderr)) {
        // Seen once in CI and not reproduced since: what join compared, to find out why.
        const show = (on: string) => kubectlOk(kc(on), ['get', 'clusters.clusterregistry.k8s.cisco.com', 'cluster1', '-o', 'yaml', '--show-managed-fields']);
        assert.fail(`join round 2 did not leave cluster2's Cluster cluster1 unchanged:\n${joined.stderr}\ncluster1's own:\n${await show('cluster1')}\ncluster2's copy:\n${await show('cluster2')}`);
      }
    }

    const table = await cli(['status', '--kubeconfig', kc('cluster2')]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+TYPE\s+STATE\s+SYNCED\s+VERSION\s+CONTROLLER/);
    assert.match(table.stdout, /cluster1\s+Peer\s+Ready\s+True\s+v1\.36\.\d+\s+ours/);
    assert.match(table.stdout, /cluster2\s+Local\s+Ready\s+-\s+v1\.36\.\d+\s+ours/);
    assert.doesNotMatch(table.stdout, /another controller/, 'no advice for a group of ours');
    const rows = JSON.parse((await cli(['status', '--kubeconfig', kc('cluster1'), '-o', 'json'])).stdout) as { name: string; type: string; state: string }[];
    assert.deepEqual(
      rows.map((r) => [r.name, r.type, r.state]),
      [
        ['cluster1', 'Local', 'Ready'],
        ['cluster2', 'Peer', 'Ready'],
      ],
    );

    // As a kubectl plugin, with kubectl's KUBECONFIG (several files, merged) and --context.
    const plugin = await promisify(execFile)(toolPath('kubectl'), ['cluster-registry', 'status', '--context', 'cluster2'], {
      env: { ...process.env, PATH: `${join(PACKAGE_ROOT, 'bin')}${delimiter}${dirname(process.execPath)}${delimiter}${process.env['PATH'] ?? ''}`, KUBECONFIG: [kc('cluster1'), kc('cluster2')].join(delimiter) },
      timeout: 60_000,
    });
    assert.match(plugin.stdout, /cluster2\s+Local\s+Ready/, 'kubectl cluster-registry status --context cluster2 speaks for cluster2');

    // And out again: cluster2 leaves while both still read each other.
    const left = await cli(['leave', '--kubeconfig', kc('cluster2'), '--member-kubeconfig', kc('cluster1')]);
    assert.equal(left.code, 0, left.stderr);
    assert.match(left.stderr, /left: cluster2 is out of the group/);
    for (const [on, sees] of [['cluster1', ['cluster1']], ['cluster2', ['cluster2']]] as const) {
      const rowsLeft = JSON.parse((await cli(['status', '--kubeconfig', kc(on), '-o', 'json'])).stdout) as { name: string }[];
      assert.deepEqual(rowsLeft.map((r) => r.name), sees, `${on} lists only itself`);
    }

    const status = await cli(['sandbox', 'status', '--dir', dir]);
    assert.equal(status.stdout.match(/cluster-registry-controller\s+\d+\s+running\s+true/g)?.length, 2);
    const pids = recordedPids(dir);
    assert.equal((await cli(['sandbox', 'down', '--dir', dir])).code, 0);
    for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} survived sandbox down`);
  });

  it('runs as `npx cluster-registry` under the Node npm itself runs on, however old, without engine warnings', async () => {
    // npm checks the package's engines against the Node it runs on (often the system's, older
    // than ours), not the pinned Node 24 that npx puts first on PATH for the CLI.
    const npmBin = existsSync('/usr/bin/npx') ? '/usr/bin' : dirname(process.execPath);
    // A checkout as a user has it (ours may carry npm's state of earlier runs): the package's
    // files, its installed dependencies and its build.
    const checkout = newDir();
    for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(PACKAGE_ROOT, f), join(checkout, f));
    cpSync(join(PACKAGE_ROOT, 'bin'), join(checkout, 'bin'), { recursive: true });
    for (const d of ['node_modules', 'dist']) symlinkSync(join(PACKAGE_ROOT, d), join(checkout, d));
    const { stdout, stderr } = await promisify(execFile)(join(npmBin, 'npx'), ['cluster-registry', '--version'], {
      cwd: checkout,
      env: { HOME: process.env.HOME ?? tmpdir(), PATH: [npmBin, '/bin'].join(delimiter) },
    });
    assert.match(stdout, /^cluster-registry version /);
    assert.doesNotMatch(stderr, /EBADENGINE|npm warn/);
  });

  it('join fails clearly when a kubeconfig is unusable, and status when the API is down', async () => {
    const r = await cli(['join', '--kubeconfig', '/nonexistent/kubeconfig', '--peer-kubeconfig', '/nonexistent/other']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /error: cannot load kubeconfig from file \/nonexistent\/kubeconfig/);

    const dir = newDir();
    const dead = join(dir, 'dead.kubeconfig');
    writeFileSync(
      dead,
      'apiVersion: v1\nkind: Config\nclusters: [{name: d, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]\n' +
        'users: [{name: d, user: {token: secret-token-value}}]\ncontexts: [{name: d, context: {cluster: d, user: d}}]\ncurrent-context: d\n',
    );
    const s = await cli(['status', '--kubeconfig', dead]);
    assert.notEqual(s.code, 0);
    assert.match(s.stderr, /^error: .*ECONNREFUSED/m);
    assert.doesNotMatch(s.stderr, /secret-token-value/);
  });
});
