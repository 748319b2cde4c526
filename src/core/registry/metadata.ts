// Cluster metadata from the cluster's Nodes, as upstream detects it but deterministic: every list is
// sorted, provider and distribution come from a majority of nodes rather than whichever node a
// cache lists first, and the version is the API server's own.
import type { ClusterMetadata } from '../api/types.ts';
import { byCodeUnit } from './order.ts';

/** The slice of a core/v1 Node that metadata detection reads. */
export interface NodeInfo {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { providerID?: string };
  status?: { nodeInfo?: { kubeletVersion?: string; kubeProxyVersion?: string } };
}

const LABEL_IKS_VERSION = 'iks.intersight.cisco.com/version';
const LABEL_OPENSHIFT_OS = 'node.openshift.io/os_id';
const LABEL_REGION = 'topology.kubernetes.io/region';
const LABEL_ZONE = 'topology.kubernetes.io/zone';
const ANNOTATION_CRI_SOCKET = 'kubeadm.alpha.kubernetes.io/cri-socket';
/** Distributions told by an annotation key with this prefix on their Nodes, whatever its value. */
const DISTRIBUTION_ANNOTATION_PREFIXES: readonly (readonly [prefix: string, distribution: string])[] = [
  ['rke.cattle.io/', 'RKE'],
  ['k3s.io/', 'K3S'],
];

/**
 * Of a Node's annotations, what the metadata reads: the CRI socket's value, and one key (without
 * its value) per distribution prefix. What a peer's Node is cached with.
 */
export function annotationsRead(annotations: Readonly<Record<string, string>>): Record<string, string> {
  const kept: Record<string, string> = {};
  if (ANNOTATION_CRI_SOCKET in annotations) kept[ANNOTATION_CRI_SOCKET] = annotations[ANNOTATION_CRI_SOCKET] ?? '';
  for (const [prefix] of DISTRIBUTION_ANNOTATION_PREFIXES) {
    const key = Object.keys(annotations).find((k) => k.startsWith(prefix));
    if (key !== undefined) kept[key] = '';
  }
  return kept;
}

/** The URL scheme of a providerID, lower-cased ("aws:///us-east-1a/i-1" -> "aws"). */
function providerScheme(providerID: string | undefined): string | undefined {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(providerID ?? '');
  return m?.[1]?.toLowerCase();
}

/** Provider rules in upstream's order; the first that matches wins. */
export function detectProvider(node: NodeInfo): string | undefined {
  const scheme = providerScheme(node.spec?.providerID);
  const iks = node.metadata?.labels?.[LABEL_IKS_VERSION] ?? '';
  switch (scheme) {
    case 'aws':
      return 'amazon';
    case 'azure':
      return 'azure';
    case 'gce':
      return 'google';
    case 'vsphere':
      return iks === '' ? 'vsphere' : 'cisco';
    case 'kind':
      return 'kind';
    default:
      return undefined;
  }
}

/** Distribution rules in upstream's order; the first that matches wins. */
export function detectDistribution(node: NodeInfo): string | undefined {
  const labels = node.metadata?.labels ?? {};
  const annotations = node.metadata?.annotations ?? {};
  const provider = detectProvider(node);
  const nonEmpty = (v: string | undefined) => v !== undefined && v !== '';
  if (!(ANNOTATION_CRI_SOCKET in annotations) && !(LABEL_OPENSHIFT_OS in labels) && provider === 'amazon') return 'EKS';
  if (nonEmpty(labels['nodepool.banzaicloud.io/name']) && nonEmpty(annotations[ANNOTATION_CRI_SOCKET])) return 'PKE';
  if (nonEmpty(labels['cloud.google.com/gke-nodepool']) && provider === 'google') return 'GKE';
  if (nonEmpty(labels['agentpool']) && provider === 'azure') return 'AKS';
  if (provider === 'kind') return 'KIND';
  if (nonEmpty(labels[LABEL_IKS_VERSION]) && provider === 'cisco') return 'IKS';
  if (nonEmpty(labels[LABEL_OPENSHIFT_OS])) return 'OPENSHIFT';
  const keys = Object.keys(annotations);
  return DISTRIBUTION_ANNOTATION_PREFIXES.find(([prefix]) => keys.some((k) => k.startsWith(prefix)))?.[1];
}

/** The value most nodes agree on; ties go to the value of the first node in name order. */
function majority(values: readonly (string | undefined)[]): string | undefined {
  const counts = new Map<string, number>();
  for (const v of values) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  let best: string | undefined;
  for (const [v, n] of counts) if (best === undefined || n > (counts.get(best) ?? 0)) best = v;
  return best;
}

function sortedDistinct(values: readonly (string | undefined)[]): string[] {
  return [...new Set(values.filter((v): v is string => !!v))].sort();
}

/**
 * Metadata of a cluster from its Nodes and its API server's `/version` gitVersion. Clusters
 * without Nodes (a bare control plane) still get their version.
 */
export function clusterMetadata(nodes: readonly NodeInfo[], apiServerVersion: string | undefined): ClusterMetadata {
  const byName = [...nodes].sort((a, b) => byCodeUnit(a.metadata?.name ?? '', b.metadata?.name ?? ''));
  const meta: ClusterMetadata = {};
  const provider = majority(byName.map(detectProvider));
  const distribution = majority(byName.map(detectDistribution));
  if (provider) meta.provider = provider;
  if (distribution) meta.distribution = distribution;
  const kubeProxyVersions = sortedDistinct(byName.map((n) => n.status?.nodeInfo?.kubeProxyVersion));
  const kubeletVersions = sortedDistinct(byName.map((n) => n.status?.nodeInfo?.kubeletVersion));
  if (kubeProxyVersions.length) meta.kubeProxyVersions = kubeProxyVersions;
  if (kubeletVersions.length) meta.kubeletVersions = kubeletVersions;
  if (apiServerVersion) meta.version = apiServerVersion;
  const regions = sortedDistinct(byName.map((n) => n.metadata?.labels?.[LABEL_REGION]));
  const zones = sortedDistinct(byName.map((n) => n.metadata?.labels?.[LABEL_ZONE]));
  if (regions.length || zones.length) meta.locality = { region: regions.join(', '), regions, zones };
  return meta;
}
