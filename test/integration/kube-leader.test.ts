// Leader election between two real processes on one Lease: one leads, the other takes over within
// the lease duration when the leader is killed, and a graceful exit releases the Lease.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ClusterConfig } from '../../src/kube/config.ts';
import { LEASES, type Lease } from '../../src/kube/leader-election.ts';
import { RestClient } from '../../src/kube/rest.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { eventually } from '../support/eventually.ts';

const CHILD = fileURLToPath(new URL('../support/kube-leader-child.ts', import.meta.url));
const LEASE_MS = 4_000;
const RETRY_MS = 500;

interface Candidate {
  id: string;
  proc: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

describe('kube leader election', () => {
  let sandbox: Sandbox;
  let rest: RestClient;
  const candidates: Candidate[] = [];

  before(async () => {
    sandbox = await startSandbox({ clusters: 1, controllerManager: false });
    rest = await RestClient.fromConfig(ClusterConfig.fromString(sandbox.clusters[0]!.kubeconfig));
  });
  after(async () => {
    for (const c of candidates) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    await Promise.all(candidates.map((c) => c.exited));
    rest?.close();
    await sandbox?.stop();
  });

  function candidate(id: string): Candidate {
    const proc = spawn(process.execPath, [CHILD], {
      env: {
        ...process.env,
        KUBECONFIG_PATH: sandbox.clusters[0]!.kubeconfigPath,
        LEASE_NAMESPACE: 'default',
        LEASE_NAME: 'failover',
        IDENTITY: id,
        LEASE_DURATION_MS: String(LEASE_MS),
        RENEW_DEADLINE_MS: '3000',
        RETRY_PERIOD_MS: String(RETRY_MS),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const c: Candidate = { id, proc, lines: [], exited: new Promise((resolve) => proc.on('exit', (code) => resolve(code))) };
    let buf = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => {
      buf += d;
      const parts = buf.split('\n');
      buf = parts.pop()!;
      c.lines.push(...parts);
    });
    candidates.push(c);
    return c;
  }

  const leading = (c: Candidate): boolean => c.lines.includes(`leading ${c.id}`);

  it('fails over to the other process within the lease duration when the leader dies', async () => {
    const a = candidate('cand-a');
    const b = candidate('cand-b');
    await eventually('one candidate to lead', () => leading(a) || leading(b), 30_000);
    const [leader, follower] = leading(a) ? [a, b] : [b, a];
    assert.equal(leading(follower), false, 'only one leader');
    await eventually('the follower to see the leader', () => follower.lines.includes(`new-leader ${leader.id}`), 10_000);

    // The leader keeps the lease across many renewals (a leader that cannot renew would also "fail over").
    const renewedBefore = (await rest.get<Lease>(LEASES, 'default', 'failover')).spec?.renewTime;
    await new Promise((r) => setTimeout(r, 2 * LEASE_MS));
    const held = await rest.get<Lease>(LEASES, 'default', 'failover');
    assert.equal(held.spec?.holderIdentity, leader.id);
    assert.notEqual(held.spec?.renewTime, renewedBefore, 'the leader renewed its lease');
    assert.equal(leader.proc.exitCode, null, 'the leader is still running');
    assert.equal(leading(follower), false, 'still only one leader');

    const killedAt = Date.now();
    leader.proc.kill('SIGKILL');
    await eventually('the follower to take over', () => leading(follower), 20_000);
    const takeover = Date.now() - killedAt;
    // The follower must wait out a full lease since it last saw a renewal, then win on its next try.
    assert.ok(takeover <= LEASE_MS + 2 * RETRY_MS * 1.2 + 1_000, `took over after ${takeover} ms`);
    const lease = await rest.get<Lease>(LEASES, 'default', 'failover');
    assert.equal(lease.spec?.holderIdentity, follower.id);
    assert.equal(lease.spec?.leaseTransitions, 1);

    // A graceful stop gives the lease up at once.
    follower.proc.kill('SIGTERM');
    assert.equal(await follower.exited, 0);
    assert.ok(follower.lines.includes(`stopped ${follower.id}`));
    const released = await rest.get<Lease>(LEASES, 'default', 'failover');
    assert.equal(released.spec?.holderIdentity, undefined);
  });
});
