// The connected peers, by Cluster name. A connection whose inputs changed is replaced
// make-before-break: the new one is built and probed before the old one is stopped, so a
// rotated token leaves no gap. The new inputs win even when they are wrong (a mistyped
// endpoint): the Cluster then reports what is wrong with what it now says.
import type { Logger } from '../kube/index.ts';
import { PeerConnection, peerFingerprint, type PeerInputs } from './connection.ts';

export interface PeerManagerOptions {
  readonly healthIntervalMs: number;
  /** Called with the peer's name when its health changes or it is replaced. */
  readonly onChange: (name: string) => void;
  /** Called after a connection is verified for the first time and before it is stopped. */
  readonly onOpened?: (conn: PeerConnection) => void;
  readonly onClosed?: (conn: PeerConnection) => void;
  readonly log: Logger;
}

export class PeerManager {
  private readonly conns = new Map<string, PeerConnection>();
  private readonly o: PeerManagerOptions;

  constructor(opts: PeerManagerOptions) {
    this.o = opts;
  }

  all(): PeerConnection[] {
    return [...this.conns.values()];
  }

  /** kube-system UIDs of the peers that are alive and verified. */
  aliveIDs(): Set<string> {
    return new Set(this.all().filter((c) => c.verified).map((c) => c.inputs.expectedID));
  }

  /** The connection for these inputs: the current one if nothing changed, else a new one (throws PeerConfigError for bad credentials). */
  async ensure(inputs: PeerInputs): Promise<PeerConnection> {
    const existing = this.conns.get(inputs.name);
    if (existing?.fingerprint === peerFingerprint(inputs)) return existing;
    const conn = new PeerConnection({
      inputs,
      healthIntervalMs: this.o.healthIntervalMs,
      onHealthChange: () => {
        if (conn.verified) this.o.onOpened?.(conn);
        this.o.onChange(inputs.name);
      },
      log: this.o.log,
    });
    try {
      await conn.open();
    } catch (err) {
      conn.stop();
      throw err;
    }
    if (existing) {
      this.o.log.info({ peer: inputs.name }, 'peer connection inputs changed; replaced the connection');
      this.close(existing);
    }
    this.conns.set(inputs.name, conn);
    conn.start();
    if (conn.verified) this.o.onOpened?.(conn);
    return conn;
  }

  remove(name: string): void {
    const conn = this.conns.get(name);
    if (!conn) return;
    this.conns.delete(name);
    this.close(conn);
    this.o.onChange(name);
  }

  stopAll(): void {
    for (const name of [...this.conns.keys()]) this.remove(name);
  }

  private close(conn: PeerConnection): void {
    this.o.onClosed?.(conn);
    conn.stop();
  }
}
