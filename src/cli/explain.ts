// `cluster-registry explain`: a dry run of a ResourceSyncRule on one cluster.
import { Command } from 'commander';
import { existsSync } from 'node:fs';
import { stringify } from 'yaml';
import { KINDS } from '../core/api/keys.ts';
import { RESOURCE_SYNC_RULES } from '../core/api/resources.ts';
import type { ResourceSyncRule } from '../core/api/types.ts';
import { ClusterConfig, RestClient } from '../kube/index.ts';
import type { Explanation } from '../ops/explain.ts';
import { readObject } from './rule.ts';
import { peerReadingOptions, type PeerReadingOptions } from './options.ts';
import { formatTable, parseOutput, printable, type Output } from './table.ts';

/** Exit codes besides 0 (nothing to change) and 1 (an error): it would write or delete something here (as `kubectl diff` says "differences found"), or the answer is incomplete (a peer not read, an object failed). */
export const EXIT_CHANGES = 2;
export const EXIT_INCOMPLETE = 3;

function print(e: Explanation, o: { output: Output; diff: boolean }): void {
  if (o.output === 'json') return void process.stdout.write(JSON.stringify(e, null, 2) + '\n');
  if (o.output === 'yaml') return void process.stdout.write(stringify(e));
  process.stdout.write(`on ${printable(e.cluster)}:\n`);
  process.stdout.write(e.rows.length === 0 ? 'nothing the rule takes\n' : formatTable(['PEER', 'SOURCE', 'COPY', 'ACTION', 'REASON'], e.rows.map((r) => [r.peer, r.source, r.copy, r.action, r.reason])));
  for (const s of e.skipped) process.stdout.write(`skipped ${printable(s.peer)}: ${printable(s.why)}\n`);
  if (!o.diff) return;
  for (const r of e.rows.filter((x) => x.diff)) {
    process.stdout.write(`\n--- ${printable(r.copy)} (${r.action}, from ${printable(r.source)} on ${printable(r.peer)})\n`);
    process.stdout.write((r.diff ?? '').split('\n').map(printable).join('\n') + '\n');
  }
}

export function explainCommand(): Command {
  return peerReadingOptions(
    new Command('explain')
      .description(`dry run of a ResourceSyncRule on one cluster: which copies it would create, update or delete here, and why; exits ${EXIT_CHANGES} when it would change something, ${EXIT_INCOMPLETE} when a peer could not be read or an object failed`)
      .requiredOption('--rule <file-or-name>', 'the rule: a YAML file, or the name of a ResourceSyncRule on the cluster'),
  )
    .option('--diff', 'show the copy to create, or what would change in it')
    .option('-o, --output <format>', 'table, json or yaml (json and yaml carry the diffs)', parseOutput, 'table' as Output)
    .action(async (o: PeerReadingOptions & { rule: string; diff?: boolean; output: Output }) => {
      // Loaded here so that a controller process, which shares this command line, never holds it.
      const { Explainer } = await import('../ops/explain.ts');
      const rest = new RestClient(await ClusterConfig.fromFileOrDefault(o.kubeconfig, o.context).connection());
      try {
        const rule = existsSync(o.rule) ? readObject<ResourceSyncRule>(o.rule, 'rule', KINDS.resourceSyncRule) : await rest.get<ResourceSyncRule>(RESOURCE_SYNC_RULES, undefined, o.rule);
        const e = await new Explainer(rest, { network: o.network, namespace: o.namespace }).explain(rule);
        print(e, { output: o.output, diff: o.diff ?? false });
        if (e.skipped.length > 0 || e.rows.some((r) => r.action === 'failed' || r.action === 'refused')) process.exitCode = EXIT_INCOMPLETE;
        else if (e.rows.some((r) => r.action === 'create' || r.action === 'update' || r.action === 'delete')) process.exitCode = EXIT_CHANGES;
      } finally {
        rest.close();
      }
    });
}
