// `cluster-registry sandbox up|down|status`: real local clusters for the demo and for trying rules.
import { Command, InvalidArgumentError } from 'commander';
import { resolve } from 'node:path';
import { formatTable } from './table.ts';

// The sandbox's modules load when a sandbox command runs, so that a controller process, which
// shares this command line, never holds their code.
const testbed = () => import('../testbed/group.ts');
const sandboxes = () => import('../sandbox/index.ts');

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new InvalidArgumentError('expected a whole number from 1 to 20');
  return n;
}

const progress = (m: string) => process.stderr.write(`sandbox: ${m}\n`);

export function sandboxCommand(): Command {
  const cmd = new Command('sandbox').description('local clusters on loopback: one etcd, a kube-apiserver and kube-controller-manager per cluster');

  cmd
    .command('up')
    .description('start N clusters and return when every apiserver is ready')
    .option('--clusters <n>', 'number of clusters', positiveInt, 2)
    .option('--names <list>', 'comma-separated cluster names (default cluster1..clusterN)')
    .requiredOption('--dir <dir>', 'where kubeconfigs, logs and state go')
    .option('--no-controllers', 'bare clusters, without the cluster-registry controller')
    .option('--join', 'join every pair of clusters into one group (needs the controllers)')
    .action(async (o: { clusters: number; names?: string; dir: string; controllers: boolean; join?: boolean }) => {
      if (o.join && !o.controllers) throw new Error('--join needs the controllers; drop --no-controllers');
      const dir = resolve(o.dir);
      const names = o.names?.split(',').map((s) => s.trim()).filter(Boolean);
      const started = Date.now();
      const sandbox = await (await testbed()).startGroup({ clusters: o.clusters, names, dir, detached: true, log: progress, controllers: o.controllers, join: o.join ?? false });
      progress(`${sandbox.clusters.length} clusters ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      process.stdout.write(
        formatTable(
          ['CLUSTER', 'SERVER', 'KUBECONFIG'],
          sandbox.clusters.map((c) => [c.name, c.server, c.kubeconfigPath]),
        ) + `\nkubectl and helm: source ${dir}/env.sh\n`,
      );
    });

  cmd
    .command('down')
    .description('stop everything `up` started in DIR and remove its state (logs stay)')
    .requiredOption('--dir <dir>', 'the directory given to `up`')
    .action(async (o: { dir: string }) => {
      const result = await (await sandboxes()).stopRecorded(resolve(o.dir));
      if (!result) {
        progress(`no sandbox recorded in ${resolve(o.dir)}; nothing to stop`);
        return;
      }
      progress(`stopped ${result.stopped.length} processes`);
    });

  cmd
    .command('status')
    .description('each cluster and component with its state')
    .requiredOption('--dir <dir>', 'the directory given to `up`')
    .action(async (o: { dir: string }) => {
      const { readState, statusOf } = await sandboxes();
      const state = readState(resolve(o.dir));
      if (!state) throw new Error(`no sandbox recorded in ${resolve(o.dir)}`);
      const rows = await statusOf(state);
      process.stdout.write(
        formatTable(
          ['CLUSTER', 'COMPONENT', 'PID', 'STATE', 'HEALTHY', 'RSS'],
          rows.map((r) => [r.cluster, r.component, String(r.pid), r.state, r.healthy === undefined ? '-' : String(r.healthy), r.rssMiB === undefined ? '-' : `${r.rssMiB}Mi`]),
        ),
      );
      if (rows.some((r) => r.state !== 'running')) process.exitCode = 1;
    });

  return cmd;
}
