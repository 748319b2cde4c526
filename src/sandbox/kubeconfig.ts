// Bearer-token kubeconfigs for sandbox clusters: the admin's, the controllers' and tests' own.
import { stringify } from 'yaml';

export interface KubeconfigInput {
  /** Names the kubeconfig cluster and context. */
  readonly name: string;
  readonly server: string;
  readonly caPem: string;
  readonly user: string;
  readonly token: string;
}

export function tokenKubeconfig({ name, server, caPem, user, token }: KubeconfigInput): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name, context: { cluster: name, user } }],
    'current-context': name,
    preferences: {},
  });
}
