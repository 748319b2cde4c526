// The node's own processes, each configured to keep its files in the node's state directory and
// to run inside the node's namespaces: containerd with the bridge CNI plugin, the kubelet,
// kube-proxy in iptables mode, and kube-scheduler.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Component, toolPath } from '../../../src/sandbox/index.ts';
import { freePort } from '../../../src/sandbox/net.ts';
import type { NodeAddresses } from './namespace.ts';

export interface NodeSettings {
  readonly name: string;
  /** The node's state directory (removed at stop). */
  readonly state: string;
  readonly logDir: string;
  readonly addresses: NodeAddresses;
  /** nsenter into the node's namespaces. */
  readonly launcher: readonly string[];
}

export const containerdSocket = (state: string): string => join(state, 'containerd', 'containerd.sock');

export function containerdComponent(s: NodeSettings, sandboxImage: string): Component {
  const cniConf = join(s.state, 'cni');
  mkdirSync(cniConf, { recursive: true });
  writeFileSync(
    join(cniConf, '10-node.conflist'),
    JSON.stringify({
      cniVersion: '0.4.0',
      name: 'node',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          // Pods reach the host through the node's veth, routed back by the host; nothing is masqueraded.
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: s.addresses.podSubnet }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: join(s.state, 'ipam') },
        },
      ],
    }),
  );
  const config = join(s.state, 'containerd.toml');
  writeFileSync(
    config,
    [
      'version = 2',
      `root = "${join(s.state, 'containerd', 'root')}"`,
      `state = "${join(s.state, 'containerd', 'state')}"`,
      // Plugins that would write to the host's /opt or probe storage backends are not needed.
      'disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper"]',
      '[grpc]',
      `  address = "${containerdSocket(s.state)}"`,
      '[ttrpc]',
      `  address = "${containerdSocket(s.state)}.ttrpc"`,
      '[plugins."io.containerd.grpc.v1.cri"]',
      `  sandbox_image = "${sandboxImage}"`,
      // The VM lacks CAP_SYS_RESOURCE: lowering a sandbox's oom_score_adj below ours fails.
      '  restrict_oom_score_adj = true',
      '  [plugins."io.containerd.grpc.v1.cri".containerd]',
      '    snapshotter = "overlayfs"',
      '    default_runtime_name = "runc"',
      '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
      '      runtime_type = "io.containerd.runc.v2"',
      '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
      '        SystemdCgroup = false',
      '  [plugins."io.containerd.grpc.v1.cri".cni]',
      '    bin_dir = "/usr/lib/cni"',
      `    conf_dir = "${cniConf}"`,
      '',
    ].join('\n'),
  );
  return new Component({ name: 'containerd', binary: 'containerd', args: ['--config', config], logFile: join(s.logDir, 'containerd.log'), detached: false, launcher: s.launcher }, undefined);
}

export async function kubeletComponent(s: NodeSettings, kubeconfigPath: string, cgroupRoot: string): Promise<Component> {
  const [port, healthz] = [await freePort(), await freePort()];
  const config = join(s.state, 'kubelet.yaml');
  const root = join(s.state, 'kubelet');
  writeFileSync(
    config,
    JSON.stringify({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: s.addresses.node,
      port,
      readOnlyPort: 0,
      healthzBindAddress: s.addresses.node,
      healthzPort: healthz,
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true } },
      authorization: { mode: 'Webhook' },
      cgroupDriver: 'cgroupfs',
      cgroupRoot,
      failCgroupV1: false,
      failSwapOn: false,
      // No cluster DNS: Pods reach everything by address.
      resolvConf: '',
      containerRuntimeEndpoint: `unix://${containerdSocket(s.state)}`,
      podLogsDir: join(s.state, 'pod-logs'),
      // ConfigMaps, Secrets and projected tokens are refreshed at this period.
      syncFrequency: '5s',
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      serializeImagePulls: false,
    }),
  );
  return new Component(
    {
      name: `kubelet ${s.name}`,
      binary: toolPath('kubelet'),
      args: [`--config=${config}`, `--kubeconfig=${kubeconfigPath}`, `--root-dir=${root}`, `--cert-dir=${join(root, 'pki')}`, `--hostname-override=${s.name}`, `--node-ip=${s.addresses.node}`, '--v=1'],
      logFile: join(s.logDir, 'kubelet.log'),
      detached: false,
      launcher: s.launcher,
    },
    `http://${s.addresses.node}:${healthz}/healthz`,
  );
}

export async function kubeProxyComponent(s: NodeSettings, kubeconfigPath: string): Promise<Component> {
  const [healthz, metrics] = [await freePort(), await freePort()];
  const config = join(s.state, 'kube-proxy.yaml');
  writeFileSync(
    config,
    JSON.stringify({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig: kubeconfigPath },
      mode: 'iptables',
      hostnameOverride: s.name,
      bindAddress: s.addresses.node,
      clusterCIDR: s.addresses.podSubnet,
      healthzBindAddress: `${s.addresses.node}:${healthz}`,
      metricsBindAddress: `${s.addresses.node}:${metrics}`,
      nodePortAddresses: [`${s.addresses.node}/32`],
      // conntrack's limits are the machine's: left as they are.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      iptables: { localhostNodePorts: false, syncPeriod: '30s', minSyncPeriod: '0s' },
    }),
  );
  return new Component(
    { name: `kube-proxy ${s.name}`, binary: toolPath('kube-proxy'), args: [`--config=${config}`, '--v=1'], logFile: join(s.logDir, 'kube-proxy.log'), detached: false, launcher: s.launcher },
    `http://${s.addresses.node}:${healthz}/healthz`,
  );
}

export function schedulerComponent(s: NodeSettings, kubeconfigPath: string): Component {
  return new Component(
    { name: `kube-scheduler ${s.name}`, binary: toolPath('kube-scheduler'), args: [`--kubeconfig=${kubeconfigPath}`, '--leader-elect=false', '--secure-port=0', '--v=1'], logFile: join(s.logDir, 'scheduler.log'), detached: false, launcher: s.launcher },
    undefined,
  );
}
