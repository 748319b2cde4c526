// Which channel a ResourceSyncRule delivers through. The registry's own rules carry what no other
// rule may (Clusters, their credentials, rules), so a rule counts as one of them only under its
// name and with exactly its spec: a rule of that name with other mutations, passed on by a peer
// where the local one is missing, is just a rule.

import { isDeepStrictEqual } from 'node:util';
import { CORE_RULE_NAMES } from '../api/keys.ts';
import { coreResourceSyncRules } from '../api/core-rules.ts';
import type { ResourceSyncRuleSpec } from '../api/types.ts';
import type { Channel } from './kinds.ts';

const CORE_CHANNELS: ReadonlyMap<string, Channel> = new Map([
  [CORE_RULE_NAMES.clusters, 'registry'],
  [CORE_RULE_NAMES.clusterSecrets, 'registry'],
  [CORE_RULE_NAMES.syncRules, 'rules'],
]);

/** The channel of the rule `name` with `spec`; `namespace` is the controller namespace. */
export function ruleChannel(name: string, spec: ResourceSyncRuleSpec, namespace: string): Channel {
  const channel = CORE_CHANNELS.get(name);
  if (channel === undefined) return 'rule';
  const core = coreResourceSyncRules(namespace).find((r) => r.metadata.name === name);
  return core !== undefined && isDeepStrictEqual(spec, core.spec) ? channel : 'rule';
}
