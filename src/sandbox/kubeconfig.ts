// Admin kubeconfigs for sandbox clusters.
import { stringify } from 'yaml';

export interface KubeconfigInput {
  readonly name: string;
  readonly server: string;
  readonly caPem: string;
  readonly token: string;
}

export function adminKubeconfig({ name, server, caPem, token }: KubeconfigInput): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: `${name}-admin`, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: `${name}-admin` } }],
    'current-context': name,
    preferences: {},
  });
}
