// The sandbox as a user drives it: `cluster-registry sandbox up/status/down` from the built CLI.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { kubectlOk } from '../support/kubectl.ts';

const CLI = fileURLToPath(new URL('../../bin/cluster-registry.js', import.meta.url));
const exec = promisify(execFile);

async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { timeout: 180_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function recordedPids(dir: string): number[] {
  const state = JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')) as {
    etcd: { pid: number };
    clusters: { processes: { pid: number }[] }[];
  };
  return [state.etcd.pid, ...state.clusters.flatMap((c) => c.processes.map((p) => p.pid))];
}

function alive(pid: number): boolean {
  try {
    return !/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('cluster-registry sandbox (CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-cli-'));
  after(async () => {
    // Whatever happened above, nothing outlives the test.
    if (existsSync(join(dir, 'sandbox.json'))) await cli(['sandbox', 'down', '--dir', dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('says clearly that controllers are not available yet instead of pretending', async () => {
    const r = await cli(['sandbox', 'up', '--clusters', '1', '--dir', dir]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /not available yet; pass --no-controllers/);
    assert.equal(existsSync(join(dir, 'sandbox.json')), false);
  });

  it('up, kubectl against a cluster, status, down leaves no process behind', async () => {
    const up = await cli(['sandbox', 'up', '--clusters', '2', '--no-controllers', '--dir', dir]);
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stdout, /cluster2\s+https:\/\/127\.0\.0\.1:\d+/);
    assert.ok(existsSync(join(dir, 'env.sh')));
    assert.match(readFileSync(join(dir, 'env.sh'), 'utf8'), /export PATH=.*\.cache\/tools\/bin/);

    const ns = await kubectlOk(join(dir, 'cluster2.kubeconfig'), ['get', 'namespaces', '-o', 'name']);
    assert.match(ns, /namespace\/kube-system/);

    const status = await cli(['sandbox', 'status', '--dir', dir]);
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.equal(status.stdout.match(/kube-apiserver\s+\d+\s+running\s+true/g)?.length, 2);
    assert.equal(status.stdout.match(/kube-controller-manager\s+\d+\s+running/g)?.length, 2);

    const pids = recordedPids(dir);
    assert.equal(pids.length, 5);
    for (const pid of pids) assert.equal(alive(pid), true);

    const down = await cli(['sandbox', 'down', '--dir', dir]);
    assert.equal(down.code, 0, down.stderr);
    for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} survived sandbox down`);
    assert.equal(existsSync(join(dir, 'sandbox.json')), false);
    assert.equal(existsSync(join(dir, 'cluster2.kubeconfig')), false);
  });
});
