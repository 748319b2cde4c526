// One cluster's connection settings, from our own kubeconfig or a peer's: the selected context of
// a kubeconfig loaded by kubeconfig.ts, turned into what our REST client needs (server URL, TLS
// material for the agents, a provider of auth headers). A peer's kubeconfig goes through the
// peer mode's allow-list, so it can only carry inline credentials for an https server.
import {
  KubeconfigError,
  defaultKubeconfig,
  inClusterKubeconfig,
  loadKubeconfigFile,
  parseKubeconfig,
  selectContext,
  selectPeer,
  type Kubeconfig,
  type PeerOverride,
  type Selected,
} from './kubeconfig.ts';

import { connect, type ConnectionSettings } from './credentials.ts';

export type { ConnectionSettings, TlsSettings } from './credentials.ts';

export class ClusterConfig {
  private readonly selected: Selected;

  private constructor(selected: Selected) {
    this.selected = selected;
  }

  static fromFile(path: string, context?: string): ClusterConfig {
    return ClusterConfig.load(() => loadKubeconfigFile(path), context, `file ${path}`);
  }

  /** From our own kubeconfig text; relative file paths resolve against the working directory. */
  static fromString(kubeconfig: string, context?: string): ClusterConfig {
    return ClusterConfig.load(() => parseKubeconfig(kubeconfig), context, 'string');
  }

  /**
   * The pod's service account; the projected token file is re-read every minute, so rotation
   * works. `root` prefixes the service-account paths (a test's fake filesystem).
   */
  static inCluster(root = ''): ClusterConfig {
    return ClusterConfig.load(() => inClusterKubeconfig(root), undefined, 'in-cluster service account');
  }

  /** A kubeconfig file when a path is given, else the default locations (the CLI's --kubeconfig). */
  static fromFileOrDefault(path: string | undefined, context?: string): ClusterConfig {
    return path ? ClusterConfig.fromFile(path, context) : ClusterConfig.fromDefault(context);
  }

  /** KUBECONFIG, ~/.kube/config, then in-cluster, like kubectl. */
  static fromDefault(context?: string): ClusterConfig {
    return ClusterConfig.load(defaultKubeconfig, context, 'default locations');
  }

  /**
   * A peer's kubeconfig (the `kubeconfig` key of its credentials Secret) in peer mode, with our
   * override of its address and CA. Throws KubeconfigError, whose message names the refused key
   * and never a value.
   */
  static forPeer(kubeconfig: string, override?: PeerOverride): ClusterConfig {
    return new ClusterConfig(selectPeer(kubeconfig, override));
  }

  // Our errors name keys and positions only; anything else thrown while loading (a bug) is
  // reduced to its class, so kubeconfig content cannot reach an error message.
  private static load(read: () => Kubeconfig, context: string | undefined, source: string): ClusterConfig {
    try {
      return new ClusterConfig(selectContext(read(), context));
    } catch (err) {
      throw new Error(`cannot load kubeconfig from ${source}: ${err instanceof KubeconfigError ? err.message : err instanceof Error ? err.name : 'error'}`);
    }
  }

  /** The server URL, without a trailing slash. */
  get server(): string {
    return this.selected.server;
  }

  /** The name of the selected context. */
  get currentContext(): string {
    return this.selected.context;
  }

  /** The namespace of the selected context, if it names one. */
  get namespace(): string | undefined {
    return this.selected.namespace;
  }

  /** Reads the TLS files now; token files and plugins are re-read or re-run as they expire. */
  async connection(): Promise<ConnectionSettings> {
    return connect(this.selected);
  }
}
