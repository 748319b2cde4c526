// The connected peers, by Cluster name. A connection whose inputs changed is replaced
// make-before-break: the new one is probed before the old one is stopped, so a rotated token
// leaves no gap. The new inputs win even when they are wrong (a mistyped endpoint): the Cluster
// then reports what is wrong with what it now says. Nothing here waits on the network: a new
// connection reports its first probe as a health change, so no caller's worker is held.
import { CacheBudget, gauge, type CacheLimits, type Logger } from '../kube/index.ts';
import { PeerConnection, peerFingerprint, type PeerInputs } from './connection.ts';

export interface PeerListener {
  /** The connection was verified for the first time: its informers run. */
  opened?(conn: PeerConnection): void;
  /** The connection is being stopped (replaced, its Cluster gone or disabled, or the term ending). */
  closed?(conn: PeerConnection): void;
  /** Its health changed, or it replaced another connection of the same name. */
  changed?(conn: PeerConnection): void;
}

const peerUp = gauge({ name: 'cluster_registry_peer_up', help: 'Whether a peer is reachable and proved to be the cluster its Cluster names (1) or not (0), by Cluster name.', labelNames: ['peer'] });

export interface PeerManagerOptions {
  readonly healthIntervalMs: number;
  /** What our caches of each peer may hold (its registry's, and the rules' sources, each), and of all peers together. */
  readonly cacheLimits: { readonly perPeer: CacheLimits; readonly allPeers: CacheLimits };
  /** The controller namespace. */
  readonly namespace: string;
  readonly log: Logger;
}

export class PeerManager {
  private readonly conns = new Map<string, PeerConnection>();
  /** New connections still waiting for their first probe, by name. */
  private readonly pending = new Map<string, PeerConnection>();
  private readonly listeners = new Set<PeerListener>();
  private readonly o: PeerManagerOptions;
  /** Every peer's caches together. */
  private readonly allPeers: CacheBudget;

  constructor(opts: PeerManagerOptions) {
    this.o = opts;
    this.allPeers = new CacheBudget({ limits: opts.cacheLimits.allPeers, of: 'all peers' });
  }

  /** Adds a listener; it hears `opened` at once for connections already open. Returns the unsubscribe. */
  subscribe(listener: PeerListener): () => void {
    this.listeners.add(listener);
    for (const c of this.conns.values()) if (c.opened) listener.opened?.(c);
    return () => this.listeners.delete(listener);
  }

  all(): PeerConnection[] {
    return [...this.conns.values()];
  }

  get(name: string): PeerConnection | undefined {
    return this.conns.get(name);
  }

  /** kube-system UIDs of the peers that are alive and verified. */
  aliveIDs(): Set<string> {
    return new Set(this.all().filter((c) => c.verified).map((c) => c.inputs.expectedID));
  }

  /**
   * The connection for these inputs: the current one if nothing changed, else one being built
   * (its health is `connecting` until its first probe). Throws PeerConfigError for unusable
   * credentials; the current connection is then left to the caller to remove.
   */
  ensure(inputs: PeerInputs): PeerConnection {
    const fingerprint = peerFingerprint(inputs);
    const current = this.conns.get(inputs.name);
    if (current?.fingerprint === fingerprint) {
      this.dropPending(inputs.name);
      return current;
    }
    const waiting = this.pending.get(inputs.name);
    if (waiting?.fingerprint === fingerprint) return waiting;
    this.dropPending(inputs.name);
    const conn = new PeerConnection({ inputs, healthIntervalMs: this.o.healthIntervalMs, cacheLimits: this.o.cacheLimits.perPeer, allPeers: this.allPeers, namespace: this.o.namespace, onChange: (c) => this.connectionChanged(c), log: this.o.log });
    if (current) {
      this.pending.set(inputs.name, conn);
    } else {
      this.conns.set(inputs.name, conn);
    }
    conn.start();
    return conn;
  }

  remove(name: string): void {
    this.dropPending(name);
    const conn = this.conns.get(name);
    if (!conn) return;
    this.conns.delete(name);
    peerUp.remove({ peer: name });
    this.close(conn);
    this.emit((l) => l.changed?.(conn));
  }

  stopAll(): void {
    for (const name of [...this.pending.keys()]) this.dropPending(name);
    for (const name of [...this.conns.keys()]) this.remove(name);
  }

  /** Its health or cache budget changed, or it is the replacement that just answered. */
  private connectionChanged(conn: PeerConnection): void {
    if (this.pending.get(conn.name) === conn) {
      // The replacement answered: it takes over now, whatever it found.
      this.pending.delete(conn.name);
      const old = this.conns.get(conn.name);
      this.conns.set(conn.name, conn);
      if (old) {
        this.o.log.info({ peer: conn.name }, 'peer connection inputs changed; replaced the connection');
        this.close(old);
      }
    } else if (this.conns.get(conn.name) !== conn) {
      return;
    }
    peerUp.set({ peer: conn.name }, conn.verified ? 1 : 0);
    if (conn.verified && !this.announced.has(conn)) {
      this.announced.add(conn);
      this.emit((l) => l.opened?.(conn));
    }
    this.emit((l) => l.changed?.(conn));
  }

  private readonly announced = new WeakSet<PeerConnection>();

  private dropPending(name: string): void {
    const p = this.pending.get(name);
    if (!p) return;
    this.pending.delete(name);
    p.stop();
  }

  private close(conn: PeerConnection): void {
    if (this.announced.has(conn)) this.emit((l) => l.closed?.(conn));
    conn.stop();
  }

  private emit(fn: (l: PeerListener) => void): void {
    for (const l of this.listeners) {
      try {
        fn(l);
      } catch (err) {
        this.o.log.error({ err }, 'peer listener failed');
      }
    }
  }
}
