// The hub-and-spoke sync as a team embeds it: its own kind (here a Database), taken from a
// management cluster by name suffix, status reported back, in its own process beside its own
// controllers. In your project, import from 'cluster-registry/hub'; this example imports the
// sources so that the tests run it as it stands.
import { ClusterConfig, Discovery, HubSync, InformerFactory, RestClient, checkHubRule, withoutManagedFields, type ClusterSide } from '../../src/hub/index.ts';

export interface DatabaseSyncOptions {
  /** Your kubeconfigs: the management cluster's and this region's. */
  hubKubeconfig: string;
  localKubeconfig: string;
  /** Which of the hub's Databases are this region's: those named <name><suffix>. */
  suffix: string;
}

/** Runs until the signal aborts; `onReady` gets the sync (for its counts, say) once it runs. */
export async function syncDatabases(o: DatabaseSyncOptions, signal: AbortSignal, onReady?: (sync: HubSync) => void): Promise<void> {
  const checked = checkHubRule('databases', {
    hub: 'management',
    groupVersionKind: { group: 'example.com', version: 'v1', kind: 'Database' },
    names: { suffix: o.suffix, namespaceSuffix: o.suffix },
    namespaces: { create: true },
  });
  if ('problems' in checked) throw new Error(`the rule is invalid: ${checked.problems.join('; ')}`);
  // The hub client reads, and writes only what the sync reports back: it refuses anything else.
  const writes = { allowed: (_method: string, _path: string) => false };
  const hubRest = new RestClient(await ClusterConfig.fromFile(o.hubKubeconfig).connection(), { readOnly: true, allowWrite: (method, path) => writes.allowed(method, path) });
  const localRest = new RestClient(await ClusterConfig.fromFile(o.localKubeconfig).connection());
  // Share these factories with your own controllers: one watch per kind and cluster for all.
  const side = (rest: RestClient, cluster: string): ClusterSide => {
    const discovery = new Discovery(rest);
    return { rest, discovery, factory: new InformerFactory({ cluster, rest, discovery, transform: withoutManagedFields }) };
  };
  const hub = side(hubRest, 'management');
  const local = side(localRest, 'local');
  const sync = new HubSync({ rule: checked.rule, hub, local });
  writes.allowed = (method, path) => sync.hubWriteAllowed(method, path);
  hub.factory.start(signal);
  local.factory.start(signal);
  try {
    onReady?.(sync);
    await sync.start(signal);
  } finally {
    hubRest.close();
    localRest.close();
  }
}
