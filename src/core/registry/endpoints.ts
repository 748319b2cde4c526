// Which API server address and CA a client uses for a Cluster, chosen as upstream chooses them.
import type { Cluster, KubernetesAPIEndpoint } from '../api/types.ts';

/**
 * The endpoint entry for a client on `network`: the first entry for exactly that network wins;
 * otherwise the last entry that names no network; otherwise none.
 */
export function pickEndpoint(cluster: Pick<Cluster, 'spec'>, network: string): KubernetesAPIEndpoint | undefined {
  let fallback: KubernetesAPIEndpoint | undefined;
  for (const ep of cluster.spec.kubernetesApiEndpoints ?? []) {
    const epNetwork = ep.clientNetwork ?? '';
    if (epNetwork === network) return ep;
    if (epNetwork === '') fallback = ep;
  }
  return fallback;
}

/** "1.2.3.4:6443" -> "https://1.2.3.4:6443"; an explicit scheme is kept. */
export function normalizeServerAddress(address: string): string {
  const withScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(address) ? address : `https://${address.replace(/^\/\//, '')}`;
  const url = new URL(withScheme);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.protocol}//${url.host}${path}`;
}

/** The PEM text of an endpoint's base64 `caBundle`, if it has one. */
export function endpointCA(ep: KubernetesAPIEndpoint | undefined): string | undefined {
  return ep?.caBundle ? Buffer.from(ep.caBundle, 'base64').toString('utf8') : undefined;
}
