// A kube-apiserver of one sandbox cluster: RBAC, a service-account issuer and signing key (so
// the TokenRequest API works), a static admin token, and its data under its own etcd prefix.
import { Component } from './component.ts';
import type { ClusterCredentials } from './credentials.ts';
import { toolPath } from './tools.ts';

export interface ApiServerSettings {
  readonly clusterName: string;
  readonly port: number;
  /** The address it serves and advertises on (default 127.0.0.1). */
  readonly address?: string;
  readonly etcdURL: string;
  readonly certDir: string;
  readonly credentials: ClusterCredentials;
  readonly logFile: string;
  readonly detached: boolean;
  readonly extraArgs: readonly string[];
  /** Where Services get their addresses (default 10.0.0.0/24). */
  readonly serviceRange?: string;
  /** A command it runs under (see ProcessSpec). */
  readonly launcher?: readonly string[];
  /** Authorizers in order (default RBAC alone; a cluster with kubelets adds Node). */
  readonly authorization?: readonly string[];
}

export function apiServerComponent(s: ApiServerSettings): Component {
  const address = s.address ?? '127.0.0.1';
  const server = `https://${address}:${s.port}`;
  return new Component(
    {
      name: `kube-apiserver ${s.clusterName}`,
      binary: toolPath('kube-apiserver'),
      args: [
        `--etcd-servers=${s.etcdURL}`,
        `--etcd-prefix=/sandbox/${s.clusterName}`,
        `--secure-port=${s.port}`,
        `--bind-address=${address}`,
        `--advertise-address=${address}`,
        // Self-signs apiserver.crt (leaf + its CA) on first start and reuses it on restarts.
        `--cert-dir=${s.certDir}`,
        `--service-cluster-ip-range=${s.serviceRange ?? '10.0.0.0/24'}`,
        '--allow-privileged=true',
        `--authorization-mode=${(s.authorization ?? ['RBAC']).join(',')}`,
        `--service-account-issuer=${server}`,
        `--service-account-key-file=${s.credentials.saPubFile}`,
        `--service-account-signing-key-file=${s.credentials.saKeyFile}`,
        `--token-auth-file=${s.credentials.tokenFile}`,
        '--profiling=false',
        '--v=1',
        ...s.extraArgs,
      ],
      logFile: s.logFile,
      detached: s.detached,
      ...(s.launcher ? { launcher: s.launcher } : {}),
    },
    `${server}/readyz`,
  );
}
