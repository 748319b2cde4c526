import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, API_GROUP_VERSION, KINDS, LABELS } from '../api/keys.ts';
import { formatSourceIdentity, type SourceIdentity } from '../api/source-identity.ts';
import type { KubeObject, ResourceSyncRuleSpec } from '../api/types.ts';
import { ruleObjectRole, type RuleObjectRole } from './rule-objects.ts';
import { ruleState } from './rule-state.ts';

const LOCAL = 'local-uid';
const PEER = 'peer-uid';
const SPEC: ResourceSyncRuleSpec = { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ labels: [{ matchLabels: { app: 'x' } }] }] }] };
const TO_SECRET: ResourceSyncRuleSpec = { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{}], mutations: { groupVersionKind: { version: 'v1', kind: 'Secret' } } }] };
const rule = (spec: ResourceSyncRuleSpec, name = 'r') => ruleState(name, spec, { apiVersion: API_GROUP_VERSION, kind: KINDS.resourceSyncRule, metadata: { name }, spec }, 'cluster-registry');

function object(kind: string, o: { labels?: Record<string, string>; owner?: string; source?: Partial<SourceIdentity> } = {}): KubeObject {
  const annotations: Record<string, string> = {};
  const labels: Record<string, string> = { ...o.labels };
  if (o.owner) annotations[ANNOTATIONS.ownership] = labels[LABELS.ownership] = o.owner;
  if (o.source) annotations[ANNOTATIONS.source] = formatSourceIdentity({ clusterID: PEER, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'a', ...o.source });
  return { apiVersion: 'v1', kind, metadata: { name: 'a', namespace: 'ns', annotations, labels } };
}

describe('ruleObjectRole', () => {
  const cases: [string, ResourceSyncRuleSpec, KubeObject, RuleObjectRole | undefined][] = [
    ['an object owned here that the rule matches', SPEC, object('ConfigMap', { labels: { app: 'x' } }), 'source'],
    ['one owned here by its own mark', SPEC, object('ConfigMap', { labels: { app: 'x' }, owner: LOCAL }), 'source'],
    ['one the rule does not match', SPEC, object('ConfigMap', { labels: { app: 'y' } }), undefined],
    ['one of another kind', SPEC, object('Secret', { labels: { app: 'x' } }), undefined],
    ['a copy the rule wrote', SPEC, object('ConfigMap', { owner: PEER, source: { rule: 'r' } }), 'copy'],
    ['a copy another rule wrote', SPEC, object('ConfigMap', { owner: PEER, source: { rule: 'other' } }), undefined],
    ['a copy recorded before rules were', SPEC, object('ConfigMap', { owner: PEER, source: {} }), 'copy'],
    ['a copy upstream’s controller wrote (an owner, no recorded source)', SPEC, object('ConfigMap', { owner: PEER }), 'copy'],
    ['a copy of a kind the rule never makes', SPEC, object('Secret', { owner: PEER, source: { rule: 'r' } }), undefined],
    ['a copy the rule made into another kind (trace does not follow it)', TO_SECRET, object('Secret', { owner: PEER, source: { rule: 'r' } }), undefined],
    ['an object owned here with a source annotation left on it, matched', SPEC, object('ConfigMap', { labels: { app: 'x' }, source: { rule: 'r' } }), 'source'],
    ['an object owned here with a source annotation left on it, not matched', SPEC, object('ConfigMap', { source: { rule: 'r' } }), undefined],
    ['an invalid rule takes nothing', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [] }, object('ConfigMap', { labels: { app: 'x' } }), undefined],
  ];
  for (const [what, spec, o, want] of cases) it(what, () => assert.equal(ruleObjectRole(rule(spec), o, LOCAL), want));
});
