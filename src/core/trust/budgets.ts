// How many copies one rule may make here from one peer. A rule's own budget is the controller's
// setting; the registry's rules carry Clusters, their credentials and rules, each of which costs
// far more than an object (a connection, caches, bindings and watches on every member), and no
// real group has more of them than a member may have peers. Those few are also never refused for
// what a peer's other copies hold: the group's registry keeps flowing from a peer whose workloads
// fill their budget.

import type { Channel } from './kinds.ts';

/** Registry entries, credentials or rules one peer may make this cluster hold: more than any real group has members or rules. */
export const REGISTRY_COPIES_PER_PEER = 256;

/** The copies one rule of `channel` may make from one peer, when rules may make `configured`. */
export function copiesPerRuleAndPeer(channel: Channel, configured: number): number {
  return channel === 'registry' || channel === 'rules' ? Math.min(configured, REGISTRY_COPIES_PER_PEER) : configured;
}

/** Whether copies of `channel` take room in what all copies from one peer may hold (and are refused once it is full). */
export function inPeerCopyBudget(channel: Channel): boolean {
  return channel !== 'registry' && channel !== 'rules';
}
