// `cluster-registry status`: the group as one cluster sees it.
import { Command } from 'commander';
import { stringify } from 'yaml';
import type { Cluster } from '../core/api/types.ts';
import { upstreamMembersHint } from '../core/registry/index.ts';
import { ClusterConfig, RestClient } from '../kube/index.ts';
import { CLUSTERS } from '../core/api/resources.ts';
import { clusterRows } from '../ops/group-view.ts';
import { formatTable, parseOutput, type Output } from './table.ts';

export function statusCommand(): Command {
  return new Command('status')
    .description('the group as this cluster sees it: every Cluster with its type, state and metadata')
    .option('--kubeconfig <path>', 'kubeconfig (default: KUBECONFIG, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .option('-o, --output <format>', 'table, json or yaml', parseOutput, 'table' as Output)
    .action(async (o: { kubeconfig?: string; context?: string; output: Output }) => {
      const cfg = ClusterConfig.fromFileOrDefault(o.kubeconfig, o.context);
      const rest = new RestClient(await cfg.connection());
      try {
        const clusters = (await rest.list<Cluster>(CLUSTERS)).items;
        const rows = clusterRows(clusters);
        if (o.output === 'json') process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
        else if (o.output === 'yaml') process.stdout.write(stringify(rows));
        else {
          const dash = (v: string) => v || '-';
          process.stdout.write(
            formatTable(
              ['NAME', 'TYPE', 'STATE', 'SYNCED', 'VERSION', 'CONTROLLER', 'PROVIDER', 'DISTRIBUTION', 'REGION', 'LAST CHECK', 'MESSAGE'],
              rows.map((r) => [r.name, r.type, r.state, r.synced, r.version, r.controller, r.provider, r.distribution, r.region, r.lastCheck, r.message].map(dash)),
            ),
          );
          const hint = upstreamMembersHint(clusters);
          if (hint) process.stdout.write(`\n${hint}\n`);
        }
      } finally {
        rest.close();
      }
    });
}
