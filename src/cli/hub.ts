// `cluster-registry hub grant`: the credentials a spoke's HubSyncRules use to reach their hub.
import { Command, InvalidArgumentError } from 'commander';
import { WELL_KNOWN } from '../core/api/keys.ts';
import { ClusterConfig, RestClient } from '../kube/index.ts';
import { parseDuration } from '../manager/config.ts';

/** `group/version/Kind`, or `version/Kind` for the core group. */
function parseKind(v: string): { group: string; version: string; kind: string } {
  const parts = v.split('/');
  const [group, version, kind] = parts.length === 2 ? ['', parts[0], parts[1]] : parts;
  if (parts.length < 2 || parts.length > 3 || !version || !kind) throw new InvalidArgumentError('expected group/version/Kind, or version/Kind for the core group');
  return { group: group ?? '', version, kind };
}

const collect = (v: string, all: string[]) => [...all, v];

export function hubCommand(): Command {
  const hub = new Command('hub').description('hub-and-spoke sync: spec, labels and annotations from a hub member down to a spoke, status back up (docs/hub-and-spoke.md)');
  hub
    .command('grant')
    .description("let a spoke sync one kind from its hub: a ServiceAccount on the hub with exactly what that needs, and on the spoke the Secret its HubSyncRules use (cluster-registry-hub-<hub>)")
    .requiredOption('--hub <name>', "the hub's Cluster name in the group")
    .requiredOption('--hub-kubeconfig <path>', 'kubeconfig of the hub')
    .option('--hub-context <name>', 'context in the hub kubeconfig')
    .option('--kubeconfig <path>', 'kubeconfig of the spoke (default: KUBECONFIG, ~/.kube/config)')
    .option('--context <name>', 'context in the spoke kubeconfig')
    .requiredOption('--spoke <name>', "the spoke's name, for the hub's ServiceAccount and roles")
    .requiredOption('--kind <group/version/Kind>', 'the kind to sync', parseKind)
    .option('--secret <name>', 'a hub Secret (with its suffix) the spoke may update; repeat for more', collect, [] as string[])
    .option('--namespace <ns>', 'the controller namespace on both sides', WELL_KNOWN.defaultNamespace)
    .option('--network <name>', "which of the hub's endpoints the spoke uses (its controller's --network-name)", 'default')
    .option('--timeout <duration>', "how long to wait for the hub's token", '1m')
    .action(
      async (o: { hub: string; hubKubeconfig: string; hubContext?: string; kubeconfig?: string; context?: string; spoke: string; kind: { group: string; version: string; kind: string }; secret: string[]; namespace: string; network: string; timeout: string }) => {
        // Loaded here so that a controller process, which shares this command line, never holds it.
        const { hubGrant } = await import('../ops/hub-grant.ts');
        const hubCfg = ClusterConfig.fromFile(o.hubKubeconfig, o.hubContext);
        const spokeCfg = ClusterConfig.fromFileOrDefault(o.kubeconfig, o.context);
        const hubSide = { rest: new RestClient(await hubCfg.connection()), label: `hub (${hubCfg.currentContext})` };
        const spokeSide = { rest: new RestClient(await spokeCfg.connection()), label: `spoke (${spokeCfg.currentContext})` };
        try {
          const secret = await hubGrant(hubSide, spokeSide, {
            hub: o.hub,
            spoke: o.spoke,
            gvk: o.kind,
            secrets: o.secret,
            namespace: o.namespace,
            network: o.network,
            timeoutMs: parseDuration(o.timeout) * 1000,
            progress: (m) => process.stderr.write(`hub grant: ${m}\n`),
          });
          process.stdout.write(`granted: HubSyncRules on ${spokeCfg.currentContext} with spec.hub ${o.hub} use Secret ${o.namespace}/${secret}\n`);
        } finally {
          hubSide.rest.close();
          spokeSide.rest.close();
        }
      },
    );
  return hub;
}
