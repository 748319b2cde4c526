// Runs a HubSync for every valid HubSyncRule of this cluster, over a connection to its hub made
// from the rule's credentials Secret. A rule is this cluster's own word: one carrying another
// cluster's copy marks (a peer's sync delivered it) never runs, and credentials are taken only
// from a hub credentials Secret (never a member's reader Secret) in the namespace kept for them,
// which no member's reader token reads. The hub is a member of the group: its Cluster names the
// kube-system UID the credentials must reach, checked before anything is read from it. The hub
// client refuses every write but the ones the rule needs (status and generation echo of the
// kind, the listed Secrets) and the renewal of its own token. What the hub sends is held to the
// same budget as a peer's caches, and what the rule makes here to the copies a rule may make.
//
// The hub token is renewed here, through the grant, halfway through its lifetime, and written
// back into the credentials Secret. A new token in the Secret (renewed, or granted again) is
// tried against the hub before the connection lets the old one go; any other change of the
// rule, its credentials or its hub Cluster starts its sync afresh, the new connection made
// before the old one stops. A rule deleted stops its sync and leaves its objects here.
import { ANNOTATIONS, HUB_CREDENTIALS, HUB_EVENT_REASONS, HUB_SYNC_RULES, isDisabled, SECRETS, secretText, type Secret } from '../core/api/index.ts';
import type { Cluster, HubSyncRule } from '../core/api/types.ts';
import {
  checkHubRule,
  defaultCredentialsSecret,
  foreignRule,
  hubCredentialsProblem,
  hubRuleStatus,
  hubRuleStatusChanged,
  hubTokenClaims,
  misplacedCredentials,
  renewalDue,
  tokenLifetimeSeconds,
  tokenRequest,
  tokenRequestPath,
  withToken,
  type HubRule,
  type HubToken,
} from '../core/hub/index.ts';
import { connect, type ConnectionSettings } from '../kube/credentials.ts';
import { selectPeer, type Selected } from '../kube/kubeconfig.ts';
import {
  ApiError,
  CacheBudget,
  Controller,
  Discovery,
  InformerFactory,
  RestClient,
  silentLogger,
  isConflict,
  sleep,
  withoutManagedFields,
  type CacheLimits,
  type EventRecorder,
  type Informer,
  type Logger,
} from '../kube/index.ts';
import { PEER_CLIENT_LIMITS } from '../peers/connection.ts';
import { kubeSystemUID } from '../peers/identity.ts';
import { HubSync, type ClusterSide } from './sync.ts';

export interface HubRulesOptions {
  local: ClusterSide;
  /** The controller namespace (where no hub may put anything, and where an earlier grant left credentials). */
  namespace: string;
  /** Where the hub credentials Secrets are: a namespace whose Secrets no member's reader token reads. */
  credentialsNamespace: string;
  /** What our caches of one rule's hub may hold together: a peer's budget. */
  cacheLimits: CacheLimits;
  /** Objects one rule may make here. */
  maxObjectsPerRule: number;
  localClusterID: string;
  clusters: Informer<Cluster>;
  events: EventRecorder;
  statusIntervalMs: number;
  /** Renew hub tokens this often at the latest (0: halfway through their lifetime). */
  tokenRefreshSeconds?: number;
  logger?: Logger;
}

interface Running {
  /** What the sync was started from, all but the token: a change of any of it starts it afresh. */
  readonly fingerprint: string;
  /** The token the connection sends now, and where it renews it (undefined: not a token that can be renewed). */
  token: string | undefined;
  tokenPath: string | undefined;
  /** The connection's credentials, swapped in place when only the token changes. */
  auth: ConnectionSettings;
  readonly stop: AbortController;
  readonly sync: HubSync;
  readonly rest: RestClient;
  readonly factory: InformerFactory;
  /** What our caches of the hub hold, against the budget. */
  readonly budget: CacheBudget;
}

interface RuleState {
  problems: readonly string[];
  notConnected: string | undefined;
  /** The problem is that the rule is another cluster's. */
  foreign?: boolean;
}

/** How soon a rule whose hub could not be connected (or whose token could not be renewed) is tried again. */
const RECONNECT_MS = 10_000;
/** Guarded writes of a renewed token, each after reading the Secret again, before the renewal counts as failed. */
const RENEW_ATTEMPTS = 3;

const errorText = (err: unknown): string => (err instanceof ApiError ? `${err.code} ${err.reason}` : err instanceof Error ? err.message : String(err));

export class HubRules {
  private readonly opts: HubRulesOptions;
  private readonly log: Logger;
  private readonly rules: Informer<HubSyncRule>;
  /** Hub credentials Secrets of their namespace (by type: no other Secret is ever read as one). */
  private readonly credentials: Informer<Secret>;
  private readonly running = new Map<string, Running>();
  private readonly states = new Map<string, RuleState>();
  /** The rules over a budget when their status was last written: an Event says so when it starts. */
  private readonly overBudgetSaid = new Set<string>();
  /** Renewals on the way, by Secret: rules sharing credentials renew them once. */
  private readonly renewing = new Map<string, Promise<void>>();
  private controller: Controller | undefined;

  constructor(opts: HubRulesOptions) {
    this.opts = opts;
    this.log = (opts.logger ?? silentLogger).child({ component: 'hub-sync' });
    this.rules = opts.local.factory.forResource<HubSyncRule>(HUB_SYNC_RULES);
    this.credentials = opts.local.factory.forResource<Secret>({ ...SECRETS, namespace: opts.credentialsNamespace, fieldSelector: `type=${HUB_CREDENTIALS.type}` });
  }

  async run(signal: AbortSignal): Promise<void> {
    // Several workers: one hub that is slow to answer holds up its own rule, not every other.
    const controller = new Controller({ name: 'hub-sync-rules', reconcile: (name, s) => this.reconcile(name, s), logger: this.log, workers: 4 });
    this.controller = controller;
    const naming = (pick: (r: HubSyncRule) => boolean) => this.rules.store.list().filter(pick).map((r) => r.metadata.name ?? '');
    controller.watch(this.rules, (r) => [r.metadata.name ?? '']);
    // A hub's Cluster that changes (its ID, say) is looked at again by the rules naming it; so is a credentials Secret.
    controller.watch(this.opts.clusters, (c) => naming((r) => r.spec?.hub === c.metadata.name));
    controller.watch(this.credentials, (s) => naming((r) => (r.spec?.credentialsSecret ?? defaultCredentialsSecret(r.spec?.hub ?? '')) === s.metadata.name));
    try {
      await Promise.all([controller.start(signal, [this.rules, this.opts.clusters, this.credentials]), this.writeStatuses(signal)]);
    } finally {
      for (const name of [...this.running.keys()]) this.stopRule(name);
    }
  }

  private async reconcile(name: string, signal: AbortSignal): Promise<{ requeueAfter?: number } | void> {
    const obj = this.rules.store.get(name);
    if (!obj) {
      this.stopRule(name);
      this.states.delete(name);
      this.overBudgetSaid.delete(name);
      return;
    }
    const foreign = foreignRule(obj);
    const checked = foreign ? { problems: [foreign] } : checkHubRule(name, obj.spec);
    if ('problems' in checked) {
      this.stopRule(name);
      this.setState(obj, { problems: checked.problems, notConnected: undefined, ...(foreign ? { foreign: true } : {}) });
      return;
    }
    const rule = checked.rule;
    const hub = this.opts.clusters.store.get(rule.hub);
    const secret = await this.credentialsSecret(rule.credentialsSecret, signal);
    const kubeconfig = secret && secretText(secret, HUB_CREDENTIALS.kubeconfigKey);
    const where = `${this.opts.credentialsNamespace}/${rule.credentialsSecret}`;
    const why = !hub?.spec?.clusterID
      ? `no Cluster named ${rule.hub} (with a clusterID) in the group`
      : isDisabled(hub)
        ? `Cluster ${rule.hub} is disabled (${ANNOTATIONS.clusterDisabled})`
        : !secret
          ? ((await this.misplaced(rule.credentialsSecret, signal)) ?? `no Secret ${where} with the hub's credentials (cluster-registry hub grant makes it)`)
          : (hubCredentialsProblem(secret, this.opts.clusters.store.list()) ?? (!kubeconfig ? `Secret ${where} has no ${HUB_CREDENTIALS.kubeconfigKey} key` : undefined));
    if (why || !hub || !secret || !kubeconfig) return this.notConnected(obj, why ?? '');
    let selected: Selected;
    try {
      // The same rules as for a peer's kubeconfig: no files, no commands, https only.
      selected = selectPeer(kubeconfig);
    } catch (err) {
      return this.notConnected(obj, `Secret ${where}: ${errorText(err)}`);
    }
    const fingerprint = JSON.stringify([obj.metadata.generation, hub.spec.clusterID, selected.server, selected.cluster, { ...selected.user, token: undefined }]);
    let running = this.running.get(name);
    if (running?.fingerprint !== fingerprint) {
      try {
        const next = await this.startRule(rule, hub.spec.clusterID, selected, fingerprint, signal);
        // Made before the old one breaks: the old sync stops only once the new one reaches the hub.
        this.stopRule(name);
        this.running.set(name, next);
        running = next;
      } catch (err) {
        return this.notConnected(obj, errorText(err));
      }
    } else if (running.token !== selected.user?.token) {
      try {
        await this.swapToken(running, selected, { name: rule.hub, clusterID: hub.spec.clusterID }, signal);
      } catch (err) {
        const message = `the new token in Secret ${where} does not reach the hub (${errorText(err)}); the one in use goes on while it lasts`;
        this.opts.events.event(obj, 'Warning', HUB_EVENT_REASONS.tokenNotRenewed, message);
        return { requeueAfter: RECONNECT_MS };
      }
    }
    this.setState(obj, { problems: [], notConnected: undefined });
    return this.renew(obj, rule, running, secret, signal);
  }

  /** The rule's credentials Secret: a hub credentials Secret from the cache, or whatever holds its name (to say why it is not one). */
  private async credentialsSecret(name: string, signal: AbortSignal): Promise<Secret | undefined> {
    const namespace = this.opts.credentialsNamespace;
    return this.credentials.store.getByName(namespace, name) ?? (await this.opts.local.rest.getIfExists<Secret>(SECRETS, namespace, name, { signal }));
  }

  /** Why credentials an earlier grant left in the controller namespace are not used, when that is where they are. */
  private async misplaced(name: string, signal: AbortSignal): Promise<string | undefined> {
    const earlier = await this.opts.local.rest.getIfExists<Secret>(SECRETS, this.opts.namespace, name, { signal }).catch(() => undefined);
    return earlier && misplacedCredentials(earlier, this.opts.credentialsNamespace);
  }

  /** Renews the token when it is due; says when to look again. */
  private async renew(obj: HubSyncRule, rule: HubRule, running: Running, secret: Secret, signal: AbortSignal): Promise<{ requeueAfter: number } | void> {
    const claims = hubTokenClaims(running.token);
    // A client certificate, or a token that does not say when it lapses: it lasts as long as the hub lets it.
    if (!claims) return;
    const due = renewalDue(claims, this.opts.tokenRefreshSeconds);
    if (Date.now() < due) return { requeueAfter: due - Date.now() };
    const key = secret.metadata.name ?? '';
    const renewal = this.renewing.get(key) ?? this.renewToken(running, secret, claims, signal).finally(() => this.renewing.delete(key));
    this.renewing.set(key, renewal);
    try {
      // The Secret written comes back as an event, and the connection takes the new token then.
      await renewal;
    } catch (err) {
      const expired = claims.expiresAt <= Date.now();
      const when = new Date(claims.expiresAt).toISOString();
      const message = `renewing the hub token in Secret ${this.opts.credentialsNamespace}/${rule.credentialsSecret} failed (${errorText(err)}); ${expired ? `it expired at ${when}: run cluster-registry hub grant again` : `the one in use lasts until ${when}`}`;
      this.log.warn({ rule: rule.name, reason: message }, 'hub token not renewed');
      this.opts.events.event(obj, 'Warning', HUB_EVENT_REASONS.tokenNotRenewed, message);
      return expired ? this.notConnected(obj, message) : { requeueAfter: RECONNECT_MS };
    }
  }

  /**
   * A new token for the token's own ServiceAccount (all the grant allows), written back into the
   * credentials Secret as it is now. The cache may be behind (our own last renewal not seen yet),
   * so the Secret is read first, and again when the guarded write meets a newer version: one that
   * no longer holds the token in use has been renewed or granted anew, and its event brings that
   * token to the connection; there is nothing to renew then, and nothing to warn about.
   */
  private async renewToken(running: Running, secret: Secret, claims: HubToken, signal: AbortSignal): Promise<void> {
    const current = running.token ?? '';
    const namespace = this.opts.credentialsNamespace;
    const name = secret.metadata.name ?? '';
    // The Secret as it is now, when it still holds the token in use (withToken finds it there).
    const fresh = async (): Promise<Secret | undefined> => {
      const now = await this.opts.local.rest.getIfExists<Secret>(SECRETS, namespace, name, { signal });
      return now && withToken(secretText(now, HUB_CREDENTIALS.kubeconfigKey) ?? '', current, current) ? now : undefined;
    };
    let holder = await fresh();
    if (!holder) return;
    const answer = await running.rest.json<{ status?: { token?: string } }>({ method: 'POST', path: tokenRequestPath(claims), body: tokenRequest(tokenLifetimeSeconds(claims)), signal });
    const token = answer.status?.token;
    const next = hubTokenClaims(token);
    if (!token || next?.serviceAccount !== claims.serviceAccount || next.namespace !== claims.namespace) throw new Error('the hub answered with no token of the same ServiceAccount');
    for (let attempt = 1; holder; attempt++) {
      const kubeconfig = withToken(secretText(holder, HUB_CREDENTIALS.kubeconfigKey) ?? '', current, token)!;
      try {
        // With the version read: a Secret changed meanwhile is read again rather than overwritten.
        await this.opts.local.rest.update(SECRETS, namespace, { ...holder, data: { ...holder.data, [HUB_CREDENTIALS.kubeconfigKey]: Buffer.from(kubeconfig).toString('base64') } }, { signal });
        this.log.info({ secret: `${namespace}/${name}`, expires: new Date(next.expiresAt).toISOString() }, 'hub token renewed');
        return;
      } catch (err) {
        if (!isConflict(err) || attempt >= RENEW_ATTEMPTS) throw err;
      }
      holder = await fresh();
    }
  }

  /** The connection takes the new token once the hub, checked with it, is still the hub. */
  private async swapToken(running: Running, selected: Selected, hub: { name: string; clusterID: string }, signal: AbortSignal): Promise<void> {
    const auth = await connect(selected);
    const probe = new RestClient(auth, { ...PEER_CLIENT_LIMITS, userAgent: 'cluster-registry/hub', hub: hub.name });
    try {
      if ((await kubeSystemUID(probe, signal)) !== hub.clusterID) throw new Error('it reaches another cluster');
    } finally {
      probe.close();
    }
    running.auth = auth;
    running.token = selected.user?.token;
    running.tokenPath = tokenPathOf(running.token);
    this.log.info({ hub: selected.server }, 'the hub connection took the new token');
  }

  private notConnected(obj: HubSyncRule, why: string): { requeueAfter: number } {
    this.stopRule(obj.metadata.name ?? '');
    this.setState(obj, { problems: [], notConnected: why });
    return { requeueAfter: RECONNECT_MS };
  }

  private setState(obj: HubSyncRule, state: RuleState): void {
    const before = this.states.get(obj.metadata.name ?? '');
    this.states.set(obj.metadata.name ?? '', state);
    const reason = state.foreign ? HUB_EVENT_REASONS.foreign : HUB_EVENT_REASONS.invalid;
    if (state.problems.length > 0 && before?.problems.join() !== state.problems.join()) this.opts.events.event(obj, 'Warning', reason, state.problems.join('; '));
    if (state.notConnected && before?.notConnected !== state.notConnected) this.opts.events.event(obj, 'Warning', HUB_EVENT_REASONS.notConnected, state.notConnected);
  }

  /** Connects to the hub (its identity checked first) and starts the rule's sync. */
  private async startRule(rule: HubRule, clusterID: string, selected: Selected, fingerprint: string, signal: AbortSignal): Promise<Running> {
    const token = selected.user?.token;
    const holder: { running?: Running; sync?: HubSync } = {};
    const first = await connect(selected);
    // Through the holder, so that a new token reaches every request without a new connection.
    const conn: ConnectionSettings = { server: first.server, tls: first.tls, authHeaders: () => (holder.running?.auth ?? first).authHeaders(), invalidate: () => (holder.running?.auth ?? first).invalidate() };
    const rest = new RestClient(conn, {
      ...PEER_CLIENT_LIMITS,
      userAgent: 'cluster-registry/hub',
      hub: rule.hub,
      allowWrite: (method, path) => (method === 'POST' && path === (holder.running?.tokenPath ?? tokenPathOf(token))) || (holder.sync?.hubWriteAllowed(method, path) ?? false),
    });
    const name = rule.name;
    try {
      const uid = await kubeSystemUID(rest, signal);
      if (uid !== clusterID) throw new Error(`the credentials reach a cluster other than ${rule.hub} (its kube-system UID is not the Cluster's clusterID)`);
      const stop = new AbortController();
      const stopped = AbortSignal.any([signal, stop.signal]);
      const discovery = new Discovery(rest);
      // A hub decides what it serves, as a peer does: our caches of it keep to a peer's budget.
      const budget = new CacheBudget({
        limits: this.opts.cacheLimits,
        onChange: (exceeded) => {
          if (exceeded) this.log.warn({ rule: name, hub: rule.hub, error: exceeded }, 'hub cache budget exceeded');
          else this.log.info({ rule: name, hub: rule.hub }, 'hub caches within their budget again');
        },
      });
      const factory = new InformerFactory({ cluster: rule.hub, rest, discovery, transform: withoutManagedFields, budgetFor: () => budget, logger: this.log });
      const sync = new HubSync({
        rule,
        local: this.opts.local,
        hub: { rest, factory, discovery },
        localClusterID: this.opts.localClusterID,
        namespace: this.opts.namespace,
        closedNamespaces: [this.opts.credentialsNamespace],
        clusters: () => this.opts.clusters.store.list(),
        maxObjects: this.opts.maxObjectsPerRule,
        logger: this.log,
        onOutcome: (key, error) => {
          const obj = this.rules.store.get(rule.name);
          if (error && obj) this.opts.events.event(obj, 'Warning', HUB_EVENT_REASONS.notSynced, `${key}: ${error}`);
        },
        onNamespaceKept: (_namespace, why) => {
          const obj = this.rules.store.get(rule.name);
          if (obj) this.opts.events.event(obj, 'Warning', HUB_EVENT_REASONS.namespaceKept, why);
        },
      });
      holder.sync = sync;
      const running: Running = { fingerprint, token, tokenPath: tokenPathOf(token), auth: first, stop, sync, rest, factory, budget };
      holder.running = running;
      factory.start(stopped);
      sync.start(stopped).then(
        () => undefined,
        (err: unknown) => {
          if (stopped.aborted) return;
          this.log.warn({ rule: name, err }, 'hub sync stopped');
          const obj = this.rules.store.get(name);
          if (!obj || this.running.get(name) !== running) return;
          this.notConnected(obj, errorText(err));
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

  /** Why the rule's hub or the rule itself is over a budget now, or undefined. */
  private overBudget(rule: HubSyncRule, running: Running | undefined): string | undefined {
    const cache = running?.budget.exceeded;
    if (cache) return `the hub ${rule.spec?.hub ?? ''} serves more than our caches of it may hold (the controller's --peer-cache-max-objects and --peer-cache-max-bytes), so some of its objects are not read: ${cache}`;
    const made = running?.sync.overBudget();
    return made && `${made} (the controller's --rule-max-copies)`;
  }

  /** Each rule's status, written when it changed; a budget newly exceeded is a Warning Event too. */
  private async writeStatuses(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      for (const obj of this.rules.store.list()) {
        const name = obj.metadata.name ?? '';
        const state = this.states.get(name);
        if (!state) continue;
        const running = this.running.get(name);
        const sync = running?.sync;
        const counts = sync?.counts() ?? { matched: 0, synced: 0, failed: 0, lastError: '', lastSyncTime: '' };
        const notConnected = state.notConnected ?? sync?.problem();
        const overBudget = this.overBudget(obj, running);
        if (overBudget && !this.overBudgetSaid.has(name)) this.opts.events.event(obj, 'Warning', HUB_EVENT_REASONS.budgetExceeded, overBudget);
        if (overBudget) this.overBudgetSaid.add(name);
        else this.overBudgetSaid.delete(name);
        const status = hubRuleStatus({ generation: obj.metadata.generation, problems: state.problems, notConnected, counts, overBudget }, obj.status, new Date());
        if (!hubRuleStatusChanged(obj.status, status)) continue;
        await this.opts.local.rest.patchStatus(HUB_SYNC_RULES, undefined, name, 'merge', { status }).catch((err: unknown) => this.log.info({ rule: name, err }, 'writing the rule status failed; retried'));
      }
      await sleep(this.opts.statusIntervalMs, signal);
    }
  }
}

/** Where a token's ServiceAccount asks for its next token, when it is one that can be renewed. */
function tokenPathOf(token: string | undefined): string | undefined {
  const claims = hubTokenClaims(token);
  return claims && tokenRequestPath(claims);
}
