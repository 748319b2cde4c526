// The cheap kube-controller-manager controllers a sync controller's behaviour depends on:
// service accounts and their token Secrets, namespace deletion, garbage collection of
// ownerReferences, and ClusterRole aggregation (the built-in view/edit/admin roles and our
// reader and controller roles are aggregated). Workload controllers, the scheduler and kubelets are left out on purpose.
import { Component } from './component.ts';
import { toolPath } from './tools.ts';

export interface ControllerManagerSettings {
  readonly clusterName: string;
  readonly kubeconfigPath: string;
  readonly saKeyFile: string;
  readonly rootCAFile: string;
  readonly logFile: string;
  readonly detached: boolean;
  /** The controllers to run (default: the cheap ones above). */
  readonly controllers?: readonly string[];
  /** A command it runs under (see ProcessSpec). */
  readonly launcher?: readonly string[];
}

export const CHEAP_CONTROLLERS: readonly string[] = ['serviceaccount-token-controller', 'serviceaccount-controller', 'namespace-controller', 'garbage-collector-controller', 'clusterrole-aggregation-controller'];

export function controllerManagerComponent(s: ControllerManagerSettings): Component {
  return new Component(
    {
      name: `kube-controller-manager ${s.clusterName}`,
      binary: toolPath('kube-controller-manager'),
      args: [
        `--kubeconfig=${s.kubeconfigPath}`,
        '--leader-elect=false',
        // No serving endpoint: nothing scrapes it, and it would cost a port and a certificate.
        '--secure-port=0',
        `--controllers=${(s.controllers ?? CHEAP_CONTROLLERS).join(',')}`,
        `--service-account-private-key-file=${s.saKeyFile}`,
        `--root-ca-file=${s.rootCAFile}`,
        '--use-service-account-credentials=false',
        '--v=1',
      ],
      logFile: s.logFile,
      detached: s.detached,
      ...(s.launcher ? { launcher: s.launcher } : {}),
    },
    undefined,
  );
}
