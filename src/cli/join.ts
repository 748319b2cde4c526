// `cluster-registry join --kubeconfig A --peer-kubeconfig B`: both clusters in one group.
import { Command } from 'commander';
import { ClusterConfig, RestClient } from '../kube/index.ts';
import { WELL_KNOWN } from '../core/api/keys.ts';
import { parseDuration } from '../manager/config.ts';

async function side(kubeconfig: string | undefined, context: string | undefined, what: string): Promise<{ rest: RestClient; label: string }> {
  const cfg = ClusterConfig.fromFileOrDefault(kubeconfig, context);
  const label = `${what} (${context ?? cfg.currentContext})`;
  return { rest: new RestClient(await cfg.connection()), label };
}

export function joinCommand(): Command {
  return new Command('join')
    .description("join two clusters: each gets the other's Cluster and reader Secret, then both are checked Ready")
    .option('--kubeconfig <path>', 'kubeconfig of the first cluster (default: KUBECONFIG, ~/.kube/config)')
    .option('--context <name>', 'context in that kubeconfig')
    .requiredOption('--peer-kubeconfig <path>', 'kubeconfig of the second cluster')
    .option('--peer-context <name>', 'context in the peer kubeconfig')
    .option('--namespace <ns>', 'the controller namespace on both sides', WELL_KNOWN.defaultNamespace)
    .option('--timeout <duration>', 'how long to wait for the controllers and the final check', '3m')
    .action(async (o: { kubeconfig?: string; context?: string; peerKubeconfig: string; peerContext?: string; namespace: string; timeout: string }) => {
      // Loaded here so that a controller process, which shares this command line, never holds it.
      const { join } = await import('../ops/join.ts');
      const a = await side(o.kubeconfig, o.context, 'cluster');
      const b = await side(o.peerKubeconfig, o.peerContext, 'peer');
      try {
        await join(a, b, {
          namespace: o.namespace,
          timeoutMs: parseDuration(o.timeout) * 1000,
          progress: (m) => process.stderr.write(`join: ${m}\n`),
        });
      } finally {
        a.rest.close();
        b.rest.close();
      }
    });
}
