// Runs a HubSync for every valid HubSyncRule of this cluster, over a connection to its hub made
// from the rule's credentials Secret. The hub is a member of the group: its Cluster names the
// kube-system UID the credentials must reach, checked before anything is read from it. The hub
// client refuses every write but the ones the rule needs (status and generation echo of the
// kind, the listed Secrets), whatever code asks. A rule changed, or its credentials or hub
// Cluster changed, starts its sync afresh; a rule deleted stops it and leaves its objects here.
import { ANNOTATIONS, CLUSTER_SECRET, HUB_EVENT_REASONS, HUB_SYNC_RULES, SECRETS, secretText, type Secret } from '../core/api/index.ts';
import type { Cluster, HubSyncRule } from '../core/api/types.ts';
import { checkHubRule, hubRuleStatus, hubRuleStatusChanged, type HubRule } from '../core/hub/index.ts';
import { connect, selectPeer } from '../kube/kubeconfig.ts';
import {
  Controller,
  Discovery,
  InformerFactory,
  RestClient,
  silentLogger,
  sleep,
  withoutManagedFields,
  type EventRecorder,
  type Informer,
  type Logger,
} from '../kube/index.ts';
import { PEER_CLIENT_LIMITS } from '../peers/connection.ts';
import { kubeSystemUID } from '../peers/identity.ts';
import { HubSync, type ClusterSide } from './sync.ts';

export interface HubRulesOptions {
  local: ClusterSide;
  /** The controller namespace: where the credentials Secrets are (and where no hub may put anything). */
  namespace: string;
  localClusterID: string;
  clusters: Informer<Cluster>;
  events: EventRecorder;
  statusIntervalMs: number;
  logger?: Logger;
}

interface Running {
  /** What the sync was started from: a change of any of it starts it afresh. */
  readonly fingerprint: string;
  readonly stop: AbortController;
  readonly sync: HubSync;
  readonly rest: RestClient;
  readonly factory: InformerFactory;
}

interface RuleState {
  problems: readonly string[];
  notConnected: string | undefined;
}

/** How soon a rule whose hub could not be connected is tried again. */
const RECONNECT_MS = 10_000;

export class HubRules {
  private readonly opts: HubRulesOptions;
  private readonly log: Logger;
  private readonly rules: Informer<HubSyncRule>;
  private readonly running = new Map<string, Running>();
  private readonly states = new Map<string, RuleState>();
  private controller: Controller | undefined;

  constructor(opts: HubRulesOptions) {
    this.opts = opts;
    this.log = (opts.logger ?? silentLogger).child({ component: 'hub-sync' });
    this.rules = opts.local.factory.forResource<HubSyncRule>(HUB_SYNC_RULES);
  }

  async run(signal: AbortSignal): Promise<void> {
    // Several workers: one hub that is slow to answer holds up its own rule, not every other.
    const controller = new Controller({ name: 'hub-sync-rules', reconcile: (name, s) => this.reconcile(name, s), logger: this.log, workers: 4 });
    this.controller = controller;
    controller.watch(this.rules, (r) => [r.metadata.name ?? '']);
    // A hub's Cluster that changes (its ID, say) is looked at again by the rules naming it.
    controller.watch(this.opts.clusters, (c) => this.rules.store.list().filter((r) => r.spec?.hub === c.metadata.name).map((r) => r.metadata.name ?? ''));
    try {
      await Promise.all([controller.start(signal, [this.rules, this.opts.clusters]), this.writeStatuses(signal)]);
    } finally {
      for (const name of [...this.running.keys()]) this.stopRule(name);
    }
  }

  private async reconcile(name: string, signal: AbortSignal): Promise<{ requeueAfter?: number } | void> {
    const obj = this.rules.store.get(name);
    if (!obj) {
      this.stopRule(name);
      this.states.delete(name);
      return;
    }
    const checked = checkHubRule(name, obj.spec);
    if ('problems' in checked) {
      this.stopRule(name);
      this.setState(obj, { problems: checked.problems, notConnected: undefined });
      return;
    }
    const rule = checked.rule;
    const hub = this.opts.clusters.store.get(rule.hub);
    const secret = await this.opts.local.rest.getIfExists<Secret>(SECRETS, this.opts.namespace, rule.credentialsSecret, { signal });
    const why = !hub?.spec?.clusterID
      ? `no Cluster named ${rule.hub} (with a clusterID) in the group`
      : ANNOTATIONS.clusterDisabled in (hub.metadata.annotations ?? {})
        ? `Cluster ${rule.hub} is disabled (${ANNOTATIONS.clusterDisabled})`
        : !secret
        ? `no Secret ${this.opts.namespace}/${rule.credentialsSecret} with the hub's credentials (cluster-registry hub grant makes it)`
        : undefined;
    if (why || !hub || !secret) return this.notConnected(obj, why ?? '');
    const fingerprint = JSON.stringify([obj.metadata.generation, hub.spec.clusterID, secret.metadata.resourceVersion]);
    if (this.running.get(name)?.fingerprint === fingerprint) return;
    this.stopRule(name);
    try {
      this.running.set(name, await this.startRule(rule, hub.spec.clusterID, secret, fingerprint, signal));
      this.setState(obj, { problems: [], notConnected: undefined });
    } catch (err) {
      return this.notConnected(obj, err instanceof Error ? err.message : String(err));
    }
  }

  private notConnected(obj: HubSyncRule, why: string): { requeueAfter: number } {
    this.stopRule(obj.metadata.name ?? '');
    this.setState(obj, { problems: [], notConnected: why });
    return { requeueAfter: RECONNECT_MS };
  }

  private setState(obj: HubSyncRule, state: RuleState): void {
    const before = this.states.get(obj.metadata.name ?? '');
    this.states.set(obj.metadata.name ?? '', state);
    if (state.problems.length > 0 && before?.problems.join() !== state.problems.join()) this.opts.events.event(obj, 'Warning', HUB_EVENT_REASONS.invalid, state.problems.join('; '));
    if (state.notConnected && before?.notConnected !== state.notConnected) this.opts.events.event(obj, 'Warning', HUB_EVENT_REASONS.notConnected, state.notConnected);
  }

  /** Connects to the hub (its identity checked first) and starts the rule's sync. */
  private async startRule(rule: HubRule, clusterID: string, secret: Secret, fingerprint: string, signal: AbortSignal): Promise<Running> {
    const kubeconfig = secretText(secret, CLUSTER_SECRET.kubeconfigKey);
    if (!kubeconfig) throw new Error(`Secret ${this.opts.namespace}/${rule.credentialsSecret} has no ${CLUSTER_SECRET.kubeconfigKey} key`);
    // The same rules as for a peer's kubeconfig: no files, no commands, https only.
    const conn = await connect(selectPeer(kubeconfig));
    let sync: HubSync | undefined;
    const rest = new RestClient(conn, { ...PEER_CLIENT_LIMITS, userAgent: 'cluster-registry/hub', allowWrite: (method, path) => sync?.hubWriteAllowed(method, path) ?? false });
    const name = rule.name;
    try {
      const uid = await kubeSystemUID(rest, signal);
      if (uid !== clusterID) throw new Error(`the credentials reach a cluster other than ${rule.hub} (its kube-system UID is not the Cluster's clusterID)`);
      const stop = new AbortController();
      const stopped = AbortSignal.any([signal, stop.signal]);
      const discovery = new Discovery(rest);
      const factory = new InformerFactory({ cluster: rule.hub, rest, discovery, transform: withoutManagedFields, logger: this.log });
      sync = new HubSync({
        rule,
        local: this.opts.local,
        hub: { rest, factory, discovery },
        localClusterID: this.opts.localClusterID,
        protectedNamespaces: [this.opts.namespace],
        logger: this.log,
        onOutcome: (key, error) => {
          const obj = this.rules.store.get(rule.name);
          if (error && obj) this.opts.events.event(obj, 'Warning', HUB_EVENT_REASONS.notSynced, `${key}: ${error}`);
        },
      });
      factory.start(stopped);
      const running: Running = { fingerprint, stop, sync, rest, factory };
      sync.start(stopped).then(
        () => undefined,
        (err: unknown) => {
          if (stopped.aborted) return;
          this.log.warn({ rule: name, err }, 'hub sync stopped');
          const obj = this.rules.store.get(name);
          if (!obj || this.running.get(name) !== running) return;
          this.notConnected(obj, err instanceof Error ? err.message : String(err));
          // Outside a reconcile, the retry is asked for here.
          this.controller?.queue.addAfter(name, RECONNECT_MS);
        },
      );
      this.log.info({ rule: rule.name, hub: rule.hub }, 'hub sync started');
      return running;
    } catch (err) {
      rest.close();
      throw err;
    }
  }

  private stopRule(name: string): void {
    const r = this.running.get(name);
    if (!r) return;
    this.running.delete(name);
    r.stop.abort();
    r.rest.close();
  }

  /** Each rule's status, written when it changed. */
  private async writeStatuses(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      for (const obj of this.rules.store.list()) {
        const name = obj.metadata.name ?? '';
        const state = this.states.get(name);
        if (!state) continue;
        const sync = this.running.get(name)?.sync;
        const counts = sync?.counts() ?? { matched: 0, synced: 0, failed: 0, lastError: '', lastSyncTime: '' };
        const notConnected = state.notConnected ?? sync?.problem();
        const status = hubRuleStatus({ generation: obj.metadata.generation, problems: state.problems, notConnected, counts }, obj.status, new Date());
        if (!hubRuleStatusChanged(obj.status, status)) continue;
        await this.opts.local.rest.patchStatus(HUB_SYNC_RULES, undefined, name, 'merge', { status }).catch((err: unknown) => this.log.info({ rule: name, err }, 'writing the rule status failed; retried'));
      }
      await sleep(this.opts.statusIntervalMs, signal);
    }
  }
}
