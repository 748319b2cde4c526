// A short seeded bad-input fuzz run (test/fuzz/engine.ts) on two real joined clusters: a few
// hundred generated rules, features, Clusters with their kubeconfig Secrets and objects of a
// hostile peer, the trust boundary's attack shapes among them (test/fuzz/trust.ts: squatted
// identities, rules aimed at the controller namespace, nameless copies, costly templates, our own
// kinds and Events, floods), one round of the peer rewriting its own registry entry, one of it
// rewriting its copy of another's, one of it serving more than the victim's cache of it may hold,
// and slow requests held against the victim's webhook during one batch. No controller may crash,
// freeze or stall, every bad object must be reported, nothing may run a command, reach a plain
// endpoint, touch the victim's own objects or pass the trust boundary. `make fuzz` is the long run
// of the same engine.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FuzzRun, type FuzzReport } from '../fuzz/engine.ts';

/**
 * Fixed, so a failure here replays with `FUZZ_SEED=20261124 FUZZ_CASES=300 FUZZ_BATCH=100
 * FUZZ_ENTRY_EVERY=3 FUZZ_REWRITE_EVERY=2 FUZZ_OVERSIZE_EVERY=3 FUZZ_LISTENER_EVERY=2 FUZZ_COSTLY=1 make fuzz`.
 */
const SEED = 20261124;

describe('bad input from users and hostile peers, fuzzed (2 clusters, joined)', () => {
  let run: FuzzRun | undefined;
  let report: FuzzReport;

  before(async () => {
    // Each trust round once (the oversize round after the last batch), slow requests held during the second batch, costly templates rare.
    run = await FuzzRun.start({ seed: SEED, cases: 300, batchSize: 100, name: 'bad-input-fuzz', entryEvery: 3, rewriteEvery: 2, oversizeEvery: 3, listenerEvery: 2, costly: 1, log: () => undefined });
  });
  after(async () => {
    // Stopping runs the group's security checks: credentials in logs, writes to peers.
    await run?.stop();
  });

  it('gives every accepted object a verdict, reports every bad one, and never crashes, stalls or obeys a peer', async (t) => {
    report = await (run ?? assert.fail('no run')).run();
    t.diagnostic(`seed ${report.seed}: ${report.cases} cases (${report.accepted} accepted, ${report.rejected} rejected) in ${(report.durationMs / 1000).toFixed(0)} s, ${report.hostileEntryRounds} hostile entry rounds`);
    for (const [kind, tally] of Object.entries(report.byKind)) t.diagnostic(`${kind}: ${JSON.stringify(tally)}`);
    t.diagnostic(`hostile entry refused in status only (Warnings rate-limited): ${report.hostileEntryRateLimited}; error-level log lines: ${report.errorLogs} ${JSON.stringify(report.errorLogSamples.slice(0, 3))}`);
    t.diagnostic(`trust: ${JSON.stringify(report.trust)}`);
    assert.deepEqual(report.violationDetails, []);
    assert.equal(report.cases, 300);
    assert.ok((report.byKind['rule']?.bad ?? 0) > 0, 'no rule was bad: the generators lost their teeth');
    assert.equal(report.hostileEntryRounds, 1);
    const { trust } = report;
    assert.deepEqual([trust.rewriteRounds, trust.oversizeRounds, trust.listenerRounds], [1, 1, 1]);
    assert.ok(trust.squatsRefused > 0, 'no squat was left out: the squats lost their teeth');
    const refusedRules = Object.entries(report.byLabel).filter(([label]) => label.startsWith('rule/trust/')).reduce((n, [, tally]) => n + tally.bad, 0);
    assert.ok(refusedRules > 0, 'no trust-boundary rule was refused: the generators lost their teeth');
  });
});
