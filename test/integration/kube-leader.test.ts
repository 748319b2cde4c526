// Leader election between two real processes on one Lease: one leads, the other takes over once
// the lease has expired when the leader is killed, a graceful exit releases the Lease, and a leader
// cut off from the apiserver stops its work before anyone else starts theirs.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ClusterConfig } from '../../src/kube/config.ts';
import { LEASES, type Lease } from '../../src/kube/leader-election.ts';
import { RestClient } from '../../src/kube/rest.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { eventually } from '../support/eventually.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';

const CHILD = fileURLToPath(new URL('../support/kube-leader-child.ts', import.meta.url));

interface Timing {
  leaseMs: number;
  renewDeadlineMs: number;
  retryMs: number;
}

interface Event {
  event: string;
  id: string;
  at: number;
}

interface Candidate {
  id: string;
  proc: ChildProcess;
  events: Event[];
  exited: Promise<number | null>;
}

describe('kube leader election', () => {
  let sandbox: Sandbox;
  let rest: RestClient;
  const candidates: Candidate[] = [];
  const proxies: TcpProxy[] = [];

  before(async () => {
    sandbox = await startSandbox({ clusters: 1, controllerManager: false });
    rest = await RestClient.fromConfig(ClusterConfig.fromString(sandbox.clusters[0]!.kubeconfig));
  });
  after(async () => {
    for (const c of candidates) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    await Promise.all(candidates.map((c) => c.exited));
    rest?.close();
    await sandbox?.stop();
    await Promise.all(proxies.map((p) => p.stop()));
  });

  function candidate(id: string, lease: string, timing: Timing, extra: { server?: string; stopWorkMs?: number } = {}): Candidate {
    const proc = spawn(process.execPath, [CHILD], {
      env: {
        ...process.env,
        KUBECONFIG_PATH: sandbox.clusters[0]!.kubeconfigPath,
        SERVER: extra.server ?? '',
        STOP_WORK_MS: String(extra.stopWorkMs ?? 0),
        LEASE_NAMESPACE: 'default',
        LEASE_NAME: lease,
        IDENTITY: id,
        LEASE_DURATION_MS: String(timing.leaseMs),
        RENEW_DEADLINE_MS: String(timing.renewDeadlineMs),
        RETRY_PERIOD_MS: String(timing.retryMs),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const c: Candidate = { id, proc, events: [], exited: new Promise((resolve) => proc.on('exit', (code) => resolve(code))) };
    let buf = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => {
      buf += d;
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const line of parts) {
        const [event, who, at] = line.split(' ');
        c.events.push({ event: event!, id: who!, at: Number(at) });
      }
    });
    candidates.push(c);
    return c;
  }

  /** When `c` last reported `event` (about `id`, default itself) at or after `since`. */
  const reported = (c: Candidate, event: string, since = 0, id = c.id): number | undefined => c.events.findLast((e) => e.event === event && e.id === id && e.at >= since)?.at;
  const leading = (c: Candidate): boolean => reported(c, 'leading') !== undefined;
  const leadingNow = (c: Candidate): boolean => c.events.findLast((e) => e.id === c.id && (e.event === 'leading' || e.event === 'stopped'))?.event === 'leading';

  it('fails over to the other process once the lease has expired when the leader dies', async (t) => {
    const timing = { leaseMs: 4_000, renewDeadlineMs: 3_000, retryMs: 500 };
    const a = candidate('cand-a', 'failover', timing);
    const b = candidate('cand-b', 'failover', timing);
    await eventually('one candidate to lead', () => leading(a) || leading(b), 30_000);
    const [leader, follower] = leading(a) ? [a, b] : [b, a];
    assert.equal(leading(follower), false, 'only one leader');
    await eventually('the follower to see the leader', () => reported(follower, 'new-leader', 0, leader.id), 10_000);

    // The leader keeps the lease across renewals spanning more than a lease duration, by its own
    // renewTime (a leader that cannot renew would also "fail over"), while the follower, which
    // had that long to take it, holds back.
    const renewTime = (l: Lease): number => Date.parse(l.spec?.renewTime ?? '');
    const firstSeen = renewTime(await rest.get<Lease>(LEASES, 'default', 'failover'));
    const holders = new Set<string>();
    await eventually('the leader to renew for longer than a lease duration', async () => {
      const l = await rest.get<Lease>(LEASES, 'default', 'failover');
      holders.add(l.spec?.holderIdentity ?? '');
      return renewTime(l) - firstSeen > timing.leaseMs;
    }, 30_000);
    assert.deepEqual([...holders], [leader.id]);
    assert.equal(leader.proc.exitCode, null, 'the leader is still running');
    assert.equal(leading(follower), false, 'still only one leader');

    const lastRenewal = renewTime(await rest.get<Lease>(LEASES, 'default', 'failover'));
    const killedAt = Date.now();
    leader.proc.kill('SIGKILL');
    await eventually('the follower to take over', () => leading(follower), 20_000);
    t.diagnostic(`took over ${Date.now() - killedAt} ms after the kill`);
    const lease = await rest.get<Lease>(LEASES, 'default', 'failover');
    assert.equal(lease.spec?.holderIdentity, follower.id);
    assert.equal(lease.spec?.leaseTransitions, 1);
    // It waited out a full lease from the last renewal it could have seen, however late it came.
    const acquiredAt = Date.parse(lease.spec?.acquireTime ?? '');
    assert.ok(acquiredAt - lastRenewal >= timing.leaseMs, `acquired ${acquiredAt - lastRenewal} ms after the last renewal`);

    // A graceful stop gives the lease up at once.
    follower.proc.kill('SIGTERM');
    assert.equal(await follower.exited, 0);
    assert.ok(reported(follower, 'stopped') !== undefined);
    const released = await rest.get<Lease>(LEASES, 'default', 'failover');
    assert.equal(released.spec?.holderIdentity, undefined);
  });

  it('stops the cut-off leader work before the successor starts, round after round', async (t) => {
    // The controller's own timing for a 5 s lease. Leader work is told to stop by the renew
    // deadline and a successor waits a whole lease from its last sight of a renewal, so the work
    // has 2.5 s to wind down; it takes 1.5 s of them here.
    const timing = { leaseMs: 5_000, renewDeadlineMs: 2_500, retryMs: 2_000 };
    const stopWorkMs = 1_500;
    const target = new URL(sandbox.clusters[0]!.server);
    const behindProxy = async (id: string): Promise<{ c: Candidate; proxy: TcpProxy }> => {
      const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
      proxies.push(proxy);
      return { c: candidate(id, 'stepdown', timing, { server: `https://127.0.0.1:${proxy.port}`, stopWorkMs }), proxy };
    };
    const pair = [await behindProxy('step-a'), await behindProxy('step-b')];
    await eventually('one candidate to lead', () => pair.some((p) => leadingNow(p.c)), 30_000);

    // Requests fail on a dropped connection (and are retried), fail at once on a garbled one, and
    // hang on a stalled one; each must end the term in time. The cut leader campaigns again, so
    // the roles swap every round.
    let cutAt = 0;
    for (const [round, how] of (['garble', 'block', 'stall', 'garble'] as const).entries()) {
      const leader = pair.find((p) => leadingNow(p.c))!;
      const follower = pair.find((p) => p !== leader)!;
      await eventually(`round ${round}: ${follower.c.id} to see ${leader.c.id} lead`, () => reported(follower.c, 'new-leader', cutAt, leader.c.id), 20_000);
      cutAt = Date.now();
      leader.proxy[how]();

      const takenAt = await eventually(`round ${round}: ${follower.c.id} to take over`, () => reported(follower.c, 'leading', cutAt), 30_000);
      const stoppedAt = await eventually(`round ${round}: ${leader.c.id} to stop its work`, () => reported(leader.c, 'stopped-work', cutAt), 30_000);
      const abortedAt = reported(leader.c, 'aborted', cutAt)!;
      t.diagnostic(
        `round ${round} (${how}): ${leader.c.id} told to stop ${abortedAt - cutAt} ms after the cut, stopped ${stoppedAt - cutAt} ms; ` +
          `${follower.c.id} leading ${takenAt - cutAt} ms after the cut; gap without a leader at work ${takenAt - stoppedAt} ms`,
      );
      assert.ok(stoppedAt < takenAt, `round ${round}: two leaders at work for ${stoppedAt - takenAt} ms`);
      assert.equal((await rest.get<Lease>(LEASES, 'default', 'stepdown')).spec?.holderIdentity, follower.c.id);

      leader.proxy.unblock();
      await eventually(`round ${round}: ${leader.c.id} to campaign again`, () => reported(leader.c, 'lost', cutAt), 30_000);
    }
  });
});
