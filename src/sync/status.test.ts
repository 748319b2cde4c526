import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceSyncRule, ResourceSyncRuleStatus } from '../core/api/types.ts';
import { silentLogger, type RestClient } from '../kube/index.ts';
import { ruleState, type RuleState } from '../core/rules/index.ts';
import { phaseWarning, RULE_FAILED_ON_PEER, RuleStatusReporter } from './status.ts';

const spec = { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{}] };
// As the informer shows it once a status was written: only a dirty rule is written again.
const object: ResourceSyncRule = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name: 'r', uid: 'u', generation: 1 }, spec, status: { observedGeneration: 1 } };

/** Runs the reporter for a few intervals over one rule. */
async function runFor(reporter: RuleStatusReporter, rule: RuleState, intervals: number): Promise<void> {
  const controller = new AbortController();
  let passes = 0;
  await reporter.run(() => (++passes > intervals ? (controller.abort(), []) : [rule]), 1, controller.signal);
}

describe('RuleStatusReporter', () => {
  it('writes an outcome that arrives while the previous status write is on the way', async () => {
    const written: ResourceSyncRuleStatus[] = [];
    const box: { reporter?: RuleStatusReporter } = {};
    const rest = {
      patchStatus: async (_ref: unknown, _ns: unknown, _name: string, _type: string, body: { status: ResourceSyncRuleStatus }) => {
        written.push(body.status);
        // The first write is on the way when an object of the rule fails.
        if (written.length === 1) box.reporter?.outcome('r', 'peer', 'ns/o', 'failed', { error: 'ns/o: refused' });
        return {};
      },
    } as unknown as RestClient;
    const reporter = (box.reporter = new RuleStatusReporter({ rest, log: silentLogger }));
    reporter.outcome('r', 'peer', 'ns/first', 'synced');
    await runFor(reporter, ruleState('r', spec, object, 'cluster-registry'), 5);
    assert.equal(written.length, 2, 'the outcome that came during the first write was never written');
    assert.equal(written[1]?.clusters?.[0]?.lastError, 'ns/o: refused');
  });

  it('retries a status write that failed', async () => {
    let calls = 0;
    const rest = {
      patchStatus: async () => {
        if (++calls === 1) throw new Error('connection reset');
        return {};
      },
    } as unknown as RestClient;
    const reporter = new RuleStatusReporter({ rest, log: silentLogger });
    reporter.outcome('r', 'peer', 'ns/o', 'synced');
    await runFor(reporter, ruleState('r', spec, object, 'cluster-registry'), 5);
    assert.equal(calls, 2);
  });
});

describe('phaseWarning', () => {
  it('warns of a rule that cannot run against a peer, in the words of its status, and of nothing else', () => {
    const peer = { name: 'cluster2' };
    const message = 'kind Gadget of fuzz.example.com/v1 is not served here (is its CustomResourceDefinition installed?)';
    assert.deepEqual(phaseWarning({ phase: 'failed', message, peer }), { reason: RULE_FAILED_ON_PEER, message: `cluster2: ${message}` });
    for (const phase of ['starting', 'featuresUnmet', 'active'] as const) assert.equal(phaseWarning({ phase, message: 'anything', peer }), undefined, phase);
  });
});
