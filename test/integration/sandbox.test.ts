// The sandbox behaves like real clusters: distinct identities, RBAC, TokenRequest, namespace
// deletion and garbage collection by the controller manager, restarts that keep data, and a
// stop that leaves nothing running.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startSandbox, tokenKubeconfig, type Sandbox } from '../../src/sandbox/index.ts';
import { Component, ComponentError } from '../../src/sandbox/component.ts';
import { freePort } from '../../src/sandbox/net.ts';
import { eventually } from '../support/eventually.ts';
import { kubectl, kubectlOk } from '../support/kubectl.ts';
import { alive } from '../support/process.ts';

describe('sandbox', () => {
  let sandbox: Sandbox;
  const kc = (name: string) => sandbox.cluster(name).kubeconfigPath;

  before(async () => {
    sandbox = await startSandbox({ clusters: 3 });
  });
  after(async () => {
    await sandbox?.stop();
  });

  it('starts three clusters with distinct kube-system UIDs and the pinned version', async () => {
    assert.deepEqual(
      sandbox.clusters.map((c) => c.name),
      ['cluster1', 'cluster2', 'cluster3'],
    );
    const uids = await Promise.all(
      sandbox.clusters.map((c) => kubectlOk(c.kubeconfigPath, ['get', 'namespace', 'kube-system', '-o', 'jsonpath={.metadata.uid}'])),
    );
    for (const uid of uids) assert.match(uid, /^[0-9a-f-]{36}$/);
    assert.equal(new Set(uids).size, 3);
    const version = JSON.parse(await kubectlOk(kc('cluster1'), ['version', '-o', 'json'])) as { serverVersion: { gitVersion: string } };
    assert.match(version.serverVersion.gitVersion, /^v1\.36\.\d+$/);
  });

  it('denies an unprivileged ServiceAccount until a binding allows it, with a TokenRequest token', async () => {
    const cfg = kc('cluster1');
    await kubectlOk(cfg, ['create', 'namespace', 'rbac-test']);
    await kubectlOk(cfg, ['create', 'serviceaccount', 'reader', '-n', 'rbac-test']);
    // `kubectl create token` is the TokenRequest API.
    const token = (await kubectlOk(cfg, ['create', 'token', 'reader', '-n', 'rbac-test', '--duration=10m'])).trim();
    const admin = sandbox.cluster('cluster1');
    const saConfigPath = join(sandbox.dir, 'reader.kubeconfig');
    writeFileSync(saConfigPath, tokenKubeconfig({ name: 'c', server: admin.server, caPem: admin.caPem, user: 'reader', token }), { mode: 0o600 });

    const whoami = JSON.parse(await kubectlOk(saConfigPath, ['auth', 'whoami', '-o', 'json'])) as { status: { userInfo: { username: string } } };
    assert.equal(whoami.status.userInfo.username, 'system:serviceaccount:rbac-test:reader');

    const denied = await kubectl(saConfigPath, ['get', 'configmaps', '-n', 'rbac-test']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /forbidden/i);

    await kubectlOk(cfg, ['create', 'rolebinding', 'reader-view', '-n', 'rbac-test', '--clusterrole=view', '--serviceaccount=rbac-test:reader']);
    await eventually('the binding to take effect', async () => (await kubectl(saConfigPath, ['get', 'configmaps', '-n', 'rbac-test'])).code === 0);
    // The binding is namespaced: other namespaces stay denied.
    assert.notEqual((await kubectl(saConfigPath, ['get', 'configmaps', '-n', 'default'])).code, 0);
  });

  it('populates legacy service-account token Secrets (token controller)', async () => {
    const cfg = kc('cluster2');
    await kubectlOk(cfg, ['create', 'namespace', 'token-test']);
    await kubectlOk(cfg, ['create', 'serviceaccount', 'legacy', '-n', 'token-test']);
    await kubectlOk(
      cfg,
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'legacy-token', namespace: 'token-test', annotations: { 'kubernetes.io/service-account.name': 'legacy' } },
        type: 'kubernetes.io/service-account-token',
      }),
    );
    await eventually('the token controller to fill the Secret', async () => {
      const keys = await kubectlOk(cfg, ['get', 'secret', 'legacy-token', '-n', 'token-test', '-o', 'jsonpath={.data}']);
      return keys.includes('"token"') && keys.includes('"ca.crt"');
    });
  });

  it('completes namespace deletion and cascades ownerReferences', async () => {
    const cfg = kc('cluster2');
    await kubectlOk(cfg, ['create', 'namespace', 'doomed']);
    await kubectlOk(cfg, ['create', 'configmap', 'owner', '-n', 'doomed']);
    const ownerUid = (await kubectlOk(cfg, ['get', 'configmap', 'owner', '-n', 'doomed', '-o', 'jsonpath={.metadata.uid}'])).trim();
    await kubectlOk(
      cfg,
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'dependent', namespace: 'doomed', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: ownerUid }] },
      }),
    );
    await kubectlOk(cfg, ['delete', 'configmap', 'owner', '-n', 'doomed', '--wait=true']);
    await eventually('the garbage collector to delete the dependent', async () => (await kubectl(cfg, ['get', 'configmap', 'dependent', '-n', 'doomed'])).code !== 0);

    await kubectlOk(cfg, ['delete', 'namespace', 'doomed', '--wait=true', '--timeout=90s']);
    const gone = await kubectl(cfg, ['get', 'namespace', 'doomed']);
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /NotFound/);
  });

  it('brings a killed apiserver back with its data', async () => {
    const c3 = sandbox.cluster('cluster3');
    await kubectlOk(c3.kubeconfigPath, ['create', 'configmap', 'survivor', '-n', 'default', '--from-literal=k=v']);
    const oldPid = c3.apiserver.pid;
    await c3.apiserver.kill();
    assert.equal(alive(oldPid ?? -1), false);
    const down = await kubectl(c3.kubeconfigPath, ['get', 'configmap', 'survivor', '-n', 'default', '--request-timeout=3s']);
    assert.notEqual(down.code, 0);
    await c3.apiserver.restart();
    assert.notEqual(c3.apiserver.pid, oldPid);
    const value = await kubectlOk(c3.kubeconfigPath, ['get', 'configmap', 'survivor', '-n', 'default', '-o', 'jsonpath={.data.k}']);
    assert.equal(value, 'v');
  });

  it('pauses and resumes an apiserver', async () => {
    const c1 = sandbox.cluster('cluster1');
    c1.apiserver.pause();
    const stalled = await kubectl(c1.kubeconfigPath, ['get', 'ns', 'default', '--request-timeout=2s']);
    assert.notEqual(stalled.code, 0);
    c1.apiserver.resume();
    await eventually('the resumed apiserver to answer', async () => (await kubectl(c1.kubeconfigPath, ['get', 'ns', 'default'])).code === 0);
  });

  it('leaves no process alive after stop', async () => {
    const pids = [sandbox.etcd.pid, ...sandbox.clusters.flatMap((c) => [c.apiserver.pid, c.controllerManager?.pid])].filter(
      (p): p is number => p !== undefined,
    );
    assert.equal(pids.length, 7);
    for (const pid of pids) assert.equal(alive(pid), true, `pid ${pid} should be running before stop`);
    await sandbox.stop();
    for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} still alive after stop`);
  });
});

describe('sandbox start-up failure', () => {
  /** Live (non-zombie) processes whose parent is this test process. */
  const liveChildren = (): number[] =>
    readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .flatMap((d) => {
        try {
          const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
          const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          return Number(ppid) === process.pid && state !== 'Z' ? [Number(d)] : [];
        } catch {
          return [];
        }
      });

  it('reports the failing component with its log tail and leaves nothing running', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-fail-'));
    try {
      await assert.rejects(startSandbox({ clusters: 2, dir, controllerManager: false, apiserverArgs: ['--no-such-flag=1'] }), (err: unknown) => {
        assert.match(err instanceof Error ? err.message : '', /kube-apiserver cluster\d exited during start-up; last lines of .*cluster\d-apiserver\.log:\n[\s\S]*unknown flag: --no-such-flag/);
        return true;
      });
      // etcd was running when the apiservers failed: nothing may survive, and only the logs stay.
      assert.deepEqual(liveChildren(), []);
      assert.deepEqual(readdirSync(dir), ['logs']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sandbox ended by a signal', () => {
  it('kills its servers and removes their data as it exits, when the program does not handle the signal', async () => {
    // A program holding a sandbox, as a benchmark or a test does, then interrupted (Ctrl-C).
    const holder = `
      import { readFileSync } from 'node:fs';
      const { startSandbox } = await import(${JSON.stringify(new URL('../../src/sandbox/index.ts', import.meta.url).href)});
      const sb = await startSandbox({ clusters: 1, controllerManager: false });
      const args = readFileSync('/proc/' + sb.etcd.pid + '/cmdline', 'utf8').split(String.fromCharCode(0));
      const dataDir = args.find((a) => a.startsWith('--data-dir=')).slice('--data-dir='.length);
      console.log(JSON.stringify({ pids: [sb.etcd.pid, sb.clusters[0].apiserver.pid], dataDir, dir: sb.dir }));
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', holder], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
        });
        void exited.then((code) => reject(new Error(`the holder exited (${String(code)}) before its sandbox was up`)));
      });
      const { pids, dataDir, dir } = JSON.parse(line) as { pids: number[]; dataDir: string; dir: string };
      assert.ok(existsSync(dataDir), `etcd's data in ${dataDir} while the sandbox runs`);
      child.kill('SIGINT');
      assert.equal(await exited, 130);
      await eventually('the servers to be gone', () => pids.every((pid) => !alive(pid)), 30_000);
      assert.equal(existsSync(dataDir), false, `etcd's data left in ${dataDir}`);
      assert.equal(existsSync(dir), false, `the sandbox's directory left at ${dir}`);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('sandbox ports', () => {
  it('never hands out a port twice, to servers started together or one after the other', async () => {
    // A thousand draws, none bound, from the ~22,000 ports below the ephemeral range, in batches
    // drawn at once: each is free when drawn, so without the reservation some two would coincide
    // (the odds of none are about e^-22), as they did for controllers started together.
    const ports: number[] = [];
    for (let i = 0; i < 10; i++) ports.push(...(await Promise.all(Array.from({ length: 100 }, () => freePort()))));
    assert.equal(new Set(ports).size, ports.length);
  });

  it('refuses to start a component whose health address another process answers, before starting it', async () => {
    const port = await freePort();
    const squatter = createServer((_, res) => res.end('ok'));
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-port-'));
    try {
      const component = new Component({ name: 'squatted', binary: process.execPath, args: ['-e', 'setInterval(() => undefined, 1000)'], logFile: join(dir, 'squatted.log'), detached: false }, `http://127.0.0.1:${port}/readyz`);
      await assert.rejects(component.start(), (err: unknown) => err instanceof ComponentError && /EADDRINUSE/.test(err.message));
      assert.equal(component.pid, undefined, 'never spawned');
    } finally {
      squatter.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
