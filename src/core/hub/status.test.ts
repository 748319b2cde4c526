import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hubRuleStatus, type HubRuleFacts } from './status.ts';

const facts = (extra: Partial<HubRuleFacts> = {}): HubRuleFacts => ({ generation: 1, problems: [], notConnected: undefined, counts: { matched: 2, synced: 2, failed: 0, lastError: '', lastSyncTime: '' }, overBudget: undefined, ...extra });
const condition = (f: HubRuleFacts, type: string) => hubRuleStatus(f, undefined, new Date(0)).conditions?.find((c) => c.type === type);

describe('the status of a HubSyncRule', () => {
  it('says whether what the hub sends and what the rule makes keep to their budgets, and why not', () => {
    assert.deepEqual([condition(facts(), 'WithinBudget')?.status, condition(facts(), 'WithinBudget')?.reason], ['True', 'WithinBudget']);
    const over = condition(facts({ overBudget: 'the rule holds its budget of 3 objects here' }), 'WithinBudget');
    assert.deepEqual([over?.status, over?.reason, over?.message], ['False', 'BudgetExceeded', 'the rule holds its budget of 3 objects here']);
    assert.equal(condition(facts({ overBudget: 'over', notConnected: 'away' }), 'WithinBudget')?.status, 'False', 'whatever else holds');
  });
});
