// Why a member's entry of a peer is not Ready, told from the state and message it writes there:
// upstream's conditions give every failure one reason (ClusterIsNotReady), so the texts that set
// an unreachable peer or unusable or refused credentials apart are made here and read back here.
import { CLUSTER_STATES } from '../api/keys.ts';

/** What a probe reports when the peer turns our reader credentials away. */
export const CREDENTIALS_REFUSED = {
  unauthorized: 'the peer rejected our credentials (401 Unauthorized)',
  forbidden: 'our credentials may not read the kube-system namespace (403 Forbidden)',
} as const;

const UNREACHABLE = 'peer unreachable since ';
const UNUSABLE_SETTINGS = 'unusable connection settings: ';

/** What a peer's connection reports when its credentials' kubeconfig parses but cannot be used (a bad client key, say). */
export function unusableSettings(error: string): string {
  return `${UNUSABLE_SETTINGS}${error}`;
}

/** The message of a peer whose probes fail: since when, and the last probe's `error`. */
export function unreachableMessage(since: number, error: string): string {
  return `${UNREACHABLE}${new Date(since).toISOString()}: ${error}`;
}

/**
 * `credentials`: the entry names none that may be used, or the peer refuses them;
 * `unreachable`: the peer does not answer; `other`: anything else (upstream's own messages too).
 */
export type PeerFailure = 'credentials' | 'unreachable' | 'other';

export function peerFailure(state: string | undefined, message: string): PeerFailure {
  if (state === CLUSTER_STATES.missingAuthInfo || state === CLUSTER_STATES.invalidAuthInfo) return 'credentials';
  if (state !== CLUSTER_STATES.failed || !message.startsWith(UNREACHABLE)) return 'other';
  // The time is ISO 8601, which holds no ': ', so the probe's error starts after the first one.
  const at = message.indexOf(': ', UNREACHABLE.length);
  const error = at < 0 ? '' : message.slice(at + 2);
  const refused: readonly string[] = Object.values(CREDENTIALS_REFUSED);
  return refused.includes(error) || error.startsWith(UNUSABLE_SETTINGS) ? 'credentials' : 'unreachable';
}
