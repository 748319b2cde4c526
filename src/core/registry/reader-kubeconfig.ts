// The reader kubeconfig a cluster publishes for its peers, byte-layout
// compatible with upstream's so upstream peers parse it unchanged.
import { stringify } from 'yaml';

export interface ReaderKubeconfigInput {
  /** The local Cluster's name: names the kubeconfig cluster and context. */
  readonly clusterName: string;
  /** The reader ServiceAccount's name: names the kubeconfig user. */
  readonly userName: string;
  readonly server: string;
  readonly caPem: string;
  readonly token: string;
}

export function readerKubeconfig(i: ReaderKubeconfigInput): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: i.clusterName, cluster: { server: i.server, 'certificate-authority-data': Buffer.from(i.caPem).toString('base64') } }],
    contexts: [{ name: i.clusterName, context: { cluster: i.clusterName, user: i.userName } }],
    'current-context': i.clusterName,
    preferences: {},
    users: [{ name: i.userName, user: { token: i.token } }],
  });
}

/** Joins CA bundles, skipping ones already present (upstream appends with a newline). */
export function mergeCABundles(...bundles: readonly (string | undefined)[]): string {
  const parts: string[] = [];
  for (const b of bundles) {
    const t = b?.trim();
    if (t && !parts.some((p) => p.includes(t))) parts.push(t);
  }
  return parts.join('\n') + (parts.length ? '\n' : '');
}
