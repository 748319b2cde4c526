// `cluster-registry leave --kubeconfig A --member-kubeconfig B ...`: A leaves its group.
import { Command } from 'commander';
import { WELL_KNOWN } from '../core/api/keys.ts';
import { hubCredentialsNamespace } from '../core/hub/index.ts';
import { ClusterConfig, RestClient } from '../kube/index.ts';

const collect = (v: string, all: string[]): string[] => [...all, v];

export function leaveCommand(): Command {
  return new Command('leave')
    .description('take a cluster out of its group: revoke the reader tokens its members hold, delete its entry on the members given, and theirs on it')
    .option('--kubeconfig <path>', 'kubeconfig of the leaving cluster (default: KUBECONFIG, ~/.kube/config)')
    .option('--context <name>', 'context in that kubeconfig')
    .option('--member-kubeconfig <path>', 'kubeconfig of a member to forget it (repeatable)', collect, [])
    .option('--member-context <name>', 'context of a member in the default kubeconfig (KUBECONFIG) (repeatable)', collect, [])
    .option('--namespace <ns>', 'the controller namespace on every side', WELL_KNOWN.defaultNamespace)
    .option('--hub-credentials-namespace <ns>', "where each side keeps hub credentials (its controller's --hub-credentials-namespace; default: <namespace>-hub)")
    .option('--reader-service-account <name>', "the leaving cluster's reader ServiceAccount (the controller's --reader-service-account-name)", WELL_KNOWN.readerServiceAccountName)
    .action(async (o: { kubeconfig?: string; context?: string; memberKubeconfig: string[]; memberContext: string[]; namespace: string; hubCredentialsNamespace?: string; readerServiceAccount: string }) => {
      // Loaded here so that a controller process, which shares this command line, never holds it.
      const { leave } = await import('../ops/leave.ts');
      const open = async (cfg: ClusterConfig, label: string) => ({ rest: new RestClient(await cfg.connection()), label });
      const leaverConfig = ClusterConfig.fromFileOrDefault(o.kubeconfig, o.context);
      const sides = [await open(leaverConfig, `leaving (${o.context ?? leaverConfig.currentContext})`)];
      try {
        for (const path of o.memberKubeconfig) sides.push(await open(ClusterConfig.fromFile(path), `member (${path})`));
        for (const ctx of o.memberContext) sides.push(await open(ClusterConfig.fromDefault(ctx), `member (${ctx})`));
        const [leaver, ...members] = sides;
        await leave(leaver!, members, { namespace: o.namespace, credentialsNamespace: hubCredentialsNamespace(o.namespace, o.hubCredentialsNamespace), readerServiceAccount: o.readerServiceAccount, progress: (m) => process.stderr.write(`leave: ${m}\n`) });
      } finally {
        for (const s of sides) s.rest.close();
      }
    });
}
