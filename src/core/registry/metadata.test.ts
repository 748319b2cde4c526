import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { clusterMetadata, detectDistribution, detectProvider, type NodeInfo } from './metadata.ts';

const node = (providerID: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}, name = 'n1'): NodeInfo => ({
  metadata: { name, labels, annotations },
  spec: { providerID },
});
const CRI = { 'kubeadm.alpha.kubernetes.io/cri-socket': '/run/containerd/containerd.sock' };

describe('provider and distribution (upstream fixtures)', () => {
  const cases: [string, NodeInfo, string | undefined, string | undefined][] = [
    ['amazon-eks', node('aws:///eu-west-1a/i-0abc'), 'amazon', 'EKS'],
    ['amazon-pke', node('aws:///eu-west-1a/i-0abc', { 'nodepool.banzaicloud.io/name': 'pool1' }, CRI), 'amazon', 'PKE'],
    ['azure-aks', node('azure:///subscriptions/x/vm', { agentpool: 'nodepool1' }), 'azure', 'AKS'],
    ['azure-pke', node('azure:///subscriptions/x/vm', { 'nodepool.banzaicloud.io/name': 'p' }, CRI), 'azure', 'PKE'],
    ['gcp-gke', node('gce://project/zone/vm', { 'cloud.google.com/gke-nodepool': 'default-pool' }), 'google', 'GKE'],
    ['vsphere-pke', node('vsphere://4237', { 'nodepool.banzaicloud.io/name': 'p' }, CRI), 'vsphere', 'PKE'],
    ['kind-kind', node('kind://docker/kind/kind-control-plane'), 'kind', 'KIND'],
    ['cisco-iks', node('vsphere://4237', { 'iks.intersight.cisco.com/version': '1.2' }), 'cisco', 'IKS'],
    ['amazon-openshift', node('aws:///eu-west-1a/i-1', { 'node.openshift.io/os_id': 'rhcos' }), 'amazon', 'OPENSHIFT'],
    ['unknown-rke', node('', {}, { 'rke.cattle.io/external-ip': '1.2.3.4' }), undefined, 'RKE'],
    ['unknown-k3s', node('k3s://node1', {}, { 'k3s.io/hostname': 'node1' }), undefined, 'K3S'],
    ['unknown-provider', node('vmware://x'), undefined, undefined],
    ['upper-case scheme', node('AWS:///x'), 'amazon', 'EKS'],
    ['no providerID', node(''), undefined, undefined],
  ];
  for (const [name, n, provider, distribution] of cases) {
    it(name, () => {
      assert.equal(detectProvider(n), provider);
      assert.equal(detectDistribution(n), distribution);
    });
  }
  it('EKS needs the cri-socket annotation absent', () => {
    assert.equal(detectDistribution(node('aws:///x', {}, CRI)), undefined);
  });
});

describe('clusterMetadata', () => {
  it('gives a bare control plane its API server version only', () => {
    assert.deepEqual(clusterMetadata([], 'v1.36.3'), { version: 'v1.36.3' });
  });

  it('sorts versions, regions and zones, drops empty values, and joins regions', () => {
    const nodes: NodeInfo[] = [
      { metadata: { name: 'b', labels: { 'topology.kubernetes.io/region': 'us-east-1', 'topology.kubernetes.io/zone': 'us-east-1b' } }, status: { nodeInfo: { kubeletVersion: 'v1.30.2', kubeProxyVersion: '' } } },
      { metadata: { name: 'a', labels: { 'topology.kubernetes.io/region': 'eu-west-1', 'topology.kubernetes.io/zone': 'eu-west-1a' } }, status: { nodeInfo: { kubeletVersion: 'v1.30.1', kubeProxyVersion: 'v1.30.1' } } },
    ];
    assert.deepEqual(clusterMetadata(nodes, 'v1.30.2'), {
      kubeProxyVersions: ['v1.30.1'],
      kubeletVersions: ['v1.30.1', 'v1.30.2'],
      version: 'v1.30.2',
      locality: { region: 'eu-west-1, us-east-1', regions: ['eu-west-1', 'us-east-1'], zones: ['eu-west-1a', 'us-east-1b'] },
    });
  });

  it('takes provider and distribution from the majority of nodes', () => {
    const nodes = [node('kind://a', {}, {}, 'z'), node('aws:///x', {}, {}, 'a'), node('kind://b', {}, {}, 'm')];
    const meta = clusterMetadata(nodes, undefined);
    assert.equal(meta.provider, 'kind');
    assert.equal(meta.distribution, 'KIND');
  });

  it('is independent of node order', () => {
    const arbNode = fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd'),
      scheme: fc.constantFrom('aws', 'kind', 'gce', 'vsphere', ''),
      region: fc.constantFrom('r1', 'r2', ''),
      kubelet: fc.constantFrom('v1', 'v2', ''),
    });
    fc.assert(
      fc.property(fc.uniqueArray(arbNode, { selector: (n) => n.name, maxLength: 4 }), (specs) => {
        const nodes = specs.map((s): NodeInfo => ({
          metadata: { name: s.name, labels: Object.fromEntries(s.region ? [['topology.kubernetes.io/region', s.region]] : []) },
          spec: { providerID: s.scheme ? `${s.scheme}://x` : '' },
          status: { nodeInfo: { kubeletVersion: s.kubelet } },
        }));
        assert.deepEqual(clusterMetadata([...nodes].reverse(), 'v'), clusterMetadata(nodes, 'v'));
      }),
    );
  });
});
