// `cluster-registry hub grant` and `hub revoke`: the credentials a spoke's HubSyncRules use to
// reach their hub, and their end.
import { Command, InvalidArgumentError } from 'commander';
import { WELL_KNOWN } from '../core/api/keys.ts';
import { hubCredentialsNamespace } from '../core/hub/index.ts';
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
const SPOKE_CREDENTIALS_NAMESPACE = "where the spoke keeps hub credentials, out of its members' reach (its controller's --hub-credentials-namespace; default: <namespace>-hub)";

export function hubCommand(): Command {
  const hub = new Command('hub').description('hub-and-spoke sync: spec, labels and annotations from a hub member down to a spoke, status back up (docs/hub-and-spoke.md)');
  hub
    .command('grant')
    .description("let a spoke sync one kind from its hub: a ServiceAccount on the hub with exactly what that needs in the namespaces named, and on the spoke the Secret its HubSyncRules use (cluster-registry-hub-<hub>), with an expiring token its controller renews")
    .requiredOption('--hub <name>', "the hub's Cluster name in the group")
    .requiredOption('--hub-kubeconfig <path>', 'kubeconfig of the hub')
    .option('--hub-context <name>', 'context in the hub kubeconfig')
    .option('--kubeconfig <path>', 'kubeconfig of the spoke (default: KUBECONFIG, ~/.kube/config)')
    .option('--context <name>', 'context in the spoke kubeconfig')
    .requiredOption('--spoke <name>', "the spoke's name, for the hub's ServiceAccount and roles")
    .requiredOption('--kind <group/version/Kind>', 'the kind to sync', parseKind)
    .option('--hub-namespace <ns>', "a hub namespace the spoke's objects live in (namespaced kinds; never a system one); repeat for more, and list them in the rules' spec.hubNamespaces", collect, [] as string[])
    .option('--secret <name>', 'a hub Secret (with its suffix) the spoke may update; repeat for more', collect, [] as string[])
    .option('--namespace <ns>', 'the controller namespace on both sides', WELL_KNOWN.defaultNamespace)
    .option('--hub-credentials-namespace <ns>', SPOKE_CREDENTIALS_NAMESPACE)
    .option('--network <name>', "which of the hub's endpoints the spoke uses (its controller's --network-name)", 'default')
    .option('--token-ttl <duration>', "lifetime of the spoke's hub token (at least 10m); its controller renews it halfway through (a hub away for the other half means granting again)", '24h')
    .action(
      async (o: { hub: string; hubKubeconfig: string; hubContext?: string; kubeconfig?: string; context?: string; spoke: string; kind: { group: string; version: string; kind: string }; hubNamespace: string[]; secret: string[]; namespace: string; hubCredentialsNamespace?: string; network: string; tokenTtl: string }) => {
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
            hubNamespaces: o.hubNamespace,
            secrets: o.secret,
            namespace: o.namespace,
            credentialsNamespace: hubCredentialsNamespace(o.namespace, o.hubCredentialsNamespace),
            network: o.network,
            tokenSeconds: parseDuration(o.tokenTtl),
            progress: (m) => process.stderr.write(`hub grant: ${m}\n`),
          });
          process.stdout.write(`granted: HubSyncRules on ${spokeCfg.currentContext} with spec.hub ${o.hub} use Secret ${hubCredentialsNamespace(o.namespace, o.hubCredentialsNamespace)}/${secret}\n`);
        } finally {
          hubSide.rest.close();
          spokeSide.rest.close();
        }
      },
    );
  hub
    .command('revoke')
    .description("end a spoke's grant on its hub: its ServiceAccount (every token it holds dies with it), roles and bindings; with --hub, the spoke's credentials Secret for that hub too")
    .requiredOption('--hub-kubeconfig <path>', 'kubeconfig of the hub')
    .option('--hub-context <name>', 'context in the hub kubeconfig')
    .requiredOption('--spoke <name>', 'the spoke, as named when granted')
    .option('--hub <name>', "the hub's Cluster name: also delete the spoke's credentials Secret for it (on the cluster of --kubeconfig)")
    .option('--kubeconfig <path>', 'kubeconfig of the spoke (default: KUBECONFIG, ~/.kube/config), with --hub')
    .option('--context <name>', 'context in the spoke kubeconfig')
    .option('--namespace <ns>', 'the controller namespace on both sides', WELL_KNOWN.defaultNamespace)
    .option('--hub-credentials-namespace <ns>', SPOKE_CREDENTIALS_NAMESPACE)
    .option('--timeout <duration>', "how long to wait for the hub to refuse the spoke's token", '1m')
    .action(async (o: { hubKubeconfig: string; hubContext?: string; spoke: string; hub?: string; kubeconfig?: string; context?: string; namespace: string; hubCredentialsNamespace?: string; timeout: string }) => {
      const { hubRevoke } = await import('../ops/hub-grant.ts');
      const hubCfg = ClusterConfig.fromFile(o.hubKubeconfig, o.hubContext);
      const hubSide = { rest: new RestClient(await hubCfg.connection()), label: `hub (${hubCfg.currentContext})` };
      const spokeCfg = o.hub ? ClusterConfig.fromFileOrDefault(o.kubeconfig, o.context) : undefined;
      const spokeSide = spokeCfg && { rest: new RestClient(await spokeCfg.connection()), label: `spoke (${spokeCfg.currentContext})` };
      try {
        await hubRevoke(hubSide, spokeSide, {
          spoke: o.spoke,
          ...(o.hub ? { hub: o.hub } : {}),
          namespace: o.namespace,
          credentialsNamespace: hubCredentialsNamespace(o.namespace, o.hubCredentialsNamespace),
          timeoutMs: parseDuration(o.timeout) * 1000,
          progress: (m) => process.stderr.write(`hub revoke: ${m}\n`),
        });
        process.stdout.write(`revoked: spoke ${o.spoke} holds nothing on ${hubCfg.currentContext} any more\n`);
      } finally {
        hubSide.rest.close();
        spokeSide?.rest.close();
      }
    });
  return hub;
}
