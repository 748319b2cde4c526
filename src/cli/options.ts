// Options shared by commands.
import type { Command } from 'commander';
import { WELL_KNOWN } from '../core/api/keys.ts';

export interface PeerReadingOptions {
  kubeconfig?: string;
  context?: string;
  network: string;
  namespace: string;
}

/** The cluster to run on, and how its peers are read from it: with the credentials the controller uses, found as it finds them. */
export function peerReadingOptions(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <path>', 'kubeconfig (default: KUBECONFIG, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .option('--network <name>', "this cluster's network, which picks the peers' endpoints (the controller's --network-name)", 'default')
    .option('--namespace <ns>', 'the controller namespace (credentials are read there only)', WELL_KNOWN.defaultNamespace);
}
