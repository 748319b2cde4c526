// Keeps our copies of a verified peer's self-description fresh: its own Cluster resource and
// its reader credentials Secret, read from the peer. This is how a rotated reader token reaches
// us before the old one expires. Copies are built and decided by the sync core exactly as the
// core rules would (ownership annotation and label, stripped metadata, never overwriting an
// object this cluster owns), so upstream peers see ordinary synced copies.
import { isDeepStrictEqual } from 'node:util';
import { CORE_RULE_NAMES } from '../core/api/keys.ts';
import { coreResourceSyncRules } from '../core/api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRule } from '../core/api/types.ts';
import { buildDesiredCopy, combineMutations, decideWrite, matchRule } from '../core/rules/index.ts';
import { isNotFound, objectKey, type Informer, type Logger, type ResourceRef, type RestClient } from '../kube/index.ts';
import type { PeerConnection } from './peer-connection.ts';
import { CLUSTERS, SECRETS } from './resources.ts';

export interface PeerMirrorOptions {
  readonly peer: PeerConnection;
  readonly local: RestClient;
  readonly localClusterID: string;
  /** The controller namespace (where credential Secrets live). */
  readonly namespace: string;
  /** Our local Clusters (templates and ownership need them). */
  readonly localClusters: () => readonly Cluster[];
  readonly alivePeerIDs: () => ReadonlySet<string>;
  readonly log: Logger;
}

function coreRule(namespace: string, name: string): ResourceSyncRule {
  const rule = coreResourceSyncRules(namespace).find((r) => r.metadata?.name === name);
  if (!rule) throw new Error(`no core rule ${name}`);
  return rule;
}

export class PeerMirror {
  private readonly o: PeerMirrorOptions;
  private readonly clusterRule: ResourceSyncRule;
  private readonly secretRule: ResourceSyncRule;
  private unsubscribe: (() => void)[] = [];
  private clusters: Informer<Cluster> | undefined;
  private secrets: Informer | undefined;

  constructor(opts: PeerMirrorOptions) {
    this.o = opts;
    this.clusterRule = coreRule(opts.namespace, CORE_RULE_NAMES.clusters);
    this.secretRule = coreRule(opts.namespace, CORE_RULE_NAMES.clusterSecrets);
  }

  /** Watches the peer's Clusters and credential Secrets (through the peer connection's shared informers). */
  start(): void {
    const peer = this.o.peer.peer;
    if (!peer) return;
    this.clusters = peer.informers.forResource<Cluster>({ ...CLUSTERS });
    this.secrets = peer.informers.forResource({ ...SECRETS, namespace: this.o.namespace });
    const kick = (): void => void this.sync();
    for (const inf of [this.clusters, this.secrets] as Informer[]) {
      this.unsubscribe.push(inf.addEventHandler({ onAdd: kick, onUpdate: kick }));
    }
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }

  /** The peer's own Cluster: the one there that describes the peer itself. */
  private selfCluster(): Cluster | undefined {
    const id = this.o.peer.inputs.expectedID;
    return this.clusters?.store.list().find((c) => c.spec?.clusterID === id && c.metadata?.name === this.o.peer.name);
  }

  async sync(): Promise<void> {
    const self = this.selfCluster();
    if (!self || !this.o.peer.verified) return;
    try {
      await this.mirror(CLUSTERS, this.clusterRule, self);
      const ref = self.spec.authInfo?.secretRef;
      const secret = ref?.name && ref.namespace === this.o.namespace ? this.secrets?.store.getByName(ref.namespace, ref.name) : undefined;
      if (secret) await this.mirror(SECRETS, this.secretRule, secret);
    } catch (err) {
      // The next event or the Cluster reconciler's refresh retries; status is the reconciler's to report.
      this.o.log.warn({ peer: this.o.peer.name, err: err instanceof Error ? err.message : String(err) }, 'mirroring the peer registry entry failed');
    }
  }

  private async mirror(ref: ResourceRef, rule: ResourceSyncRule, source: KubeObject): Promise<void> {
    const { matched, matchedRules } = matchRule(rule.spec, source);
    if (!matched) return;
    const desired = buildDesiredCopy(source, combineMutations(matchedRules, rule.spec), {
      syncedFromClusterID: this.o.peer.inputs.expectedID,
      localClusterID: this.o.localClusterID,
      clusters: this.o.localClusters(),
    });
    delete desired['status'];
    const ns = desired.metadata?.namespace;
    const name = desired.metadata?.name ?? '';
    let current: KubeObject | undefined;
    try {
      current = await this.o.local.get(ref, ns, name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const facts = { localClusterID: this.o.localClusterID, syncedFromClusterID: this.o.peer.inputs.expectedID, alivePeerIDs: this.o.alivePeerIDs() };
    const decision = decideWrite(facts, desired, current, false);
    if (decision.action === 'create') {
      await this.o.local.create(ref, ns, desired);
      this.o.log.info({ peer: this.o.peer.name, object: objectKey({ metadata: desired.metadata ?? {} }), kind: desired.kind }, 'mirrored peer registry entry');
    } else if (decision.action === 'update' && current && changed(current, desired)) {
      await this.o.local.update(ref, ns, { ...desired, metadata: { ...desired.metadata, resourceVersion: current.metadata?.resourceVersion } });
      this.o.log.info({ peer: this.o.peer.name, object: objectKey({ metadata: desired.metadata ?? {} }), kind: desired.kind }, 'updated mirrored peer registry entry');
    }
  }
}

/** Whether a write would change anything we mirror (spec/data/type, labels, annotations). */
function changed(current: KubeObject, desired: KubeObject): boolean {
  const pick = (o: KubeObject) => [o['spec'], o['data'], o['type'], o.metadata?.labels ?? {}, o.metadata?.annotations ?? {}];
  return !isDeepStrictEqual(pick(current), pick(desired));
}
