// `cluster-registry trace KIND NAME`: one object, its source and every member's copy of it.
import { Command } from 'commander';
import { stringify } from 'yaml';
import { ClusterConfig, RestClient } from '../kube/index.ts';
import type { Trace, TraceWrite } from '../ops/trace-rows.ts';
import { peerReadingOptions, type PeerReadingOptions } from './options.ts';
import { formatTable, parseOutput, printable, type Output } from './table.ts';

/** Exit codes besides 0 (every copy in sync) and 1 (an error), as explain's. */
export const EXIT_DIFFERS = 2;
export const EXIT_INCOMPLETE = 3;

const written = (w: TraceWrite | undefined): string => (w ? `${w.time || '?'} ${w.manager}${w.operation ? ` (${w.operation})` : ''}` : '-');

function print(t: Trace, o: { output: Output; diff: boolean }): void {
  if (o.output === 'json') return void process.stdout.write(JSON.stringify(t, null, 2) + '\n');
  if (o.output === 'yaml') return void process.stdout.write(stringify(t));
  const source = t.source ? `its source is ${t.source.object} on ${t.source.member}, at version ${t.source.version}` : 'its source could not be found';
  process.stdout.write(`${printable(t.object)} on ${printable(t.cluster)}: ${printable(source)}\n`);
  process.stdout.write(formatTable(['MEMBER', 'SEEN', 'OBJECT', 'RULE', 'STATE', 'FROM VERSION', 'LAST WRITE', 'WHY'], t.rows.map((r) => [r.member, r.seen, r.object, r.rule, r.state, r.sourceVersion ?? '-', written(r.lastWrite), r.reason || '-'])));
  if (!o.diff) return;
  for (const r of t.rows.filter((x) => x.diff)) {
    process.stdout.write(`\n--- ${printable(r.object)} on ${printable(r.member)} (${r.state}, rule ${printable(r.rule)})\n`);
    process.stdout.write((r.diff ?? '').split('\n').map(printable).join('\n') + '\n');
  }
}

export function traceCommand(): Command {
  return peerReadingOptions(
    new Command('trace')
      .description(
        `one object traced across the group, from its source or any copy of it: every member with its copy or why it has none (in sync, drifted with who edited what, blocked with why), the rule and source version each copy was written from, and its last write; what is said of this member is first-hand, of peers inferred from what they let this member read with the credentials it holds. Exits ${EXIT_DIFFERS} when a copy is not in sync (drifted, differs, absent where a rule takes it, blocked, stale), ${EXIT_INCOMPLETE} when a member or the source could not be read`,
      )
      .argument('<kind>', 'the kind, as kubectl takes it: configmap, ConfigMap, deployments.apps…')
      .argument('<name>', 'the object on this cluster: its source, or a copy of it')
      .option('-n, --object-namespace <ns>', "the object's namespace, for a namespaced kind (default: the context's, else default); --namespace is the controller's, as in every command"),
  )
    .option('--diff', "show what each member's sync would write to its copy")
    .option('-o, --output <format>', 'table, json or yaml (json and yaml carry the diffs)', parseOutput, 'table' as Output)
    .action(async (kind: string, name: string, o: PeerReadingOptions & { objectNamespace?: string; diff?: boolean; output: Output }) => {
      // Loaded here so that a controller process, which shares this command line, never holds it.
      const { Tracer } = await import('../ops/trace.ts');
      const { traceOutcome } = await import('../ops/trace-rows.ts');
      const config = ClusterConfig.fromFileOrDefault(o.kubeconfig, o.context);
      const rest = new RestClient(await config.connection());
      try {
        const t = await new Tracer(rest, { network: o.network, namespace: o.namespace }).trace({ kind, name, namespace: o.objectNamespace ?? config.namespace ?? 'default' });
        print(t, { output: o.output, diff: o.diff ?? false });
        const outcome = traceOutcome(t);
        process.exitCode = outcome === 'incomplete' ? EXIT_INCOMPLETE : outcome === 'differs' ? EXIT_DIFFERS : 0;
      } finally {
        rest.close();
      }
    });
}
