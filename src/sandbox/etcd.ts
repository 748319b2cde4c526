// The one etcd every sandbox cluster stores its data in (each apiserver under its own prefix).
import { Component } from './component.ts';
import { freePort } from './net.ts';
import { toolPath } from './tools.ts';

export interface EtcdSettings {
  readonly dataDir: string;
  readonly logFile: string;
  readonly detached: boolean;
  /** Where it listens (default 127.0.0.1). */
  readonly address?: string;
  /** A command it runs under (see ProcessSpec). */
  readonly launcher?: readonly string[];
}

export class Etcd extends Component {
  readonly clientURL: string;

  private constructor(settings: EtcdSettings, clientPort: number, peerPort: number) {
    const address = settings.address ?? '127.0.0.1';
    const client = `http://${address}:${clientPort}`;
    const peer = `http://${address}:${peerPort}`;
    super(
      {
        name: 'etcd',
        binary: toolPath('etcd'),
        args: [
          '--name=default',
          `--data-dir=${settings.dataDir}`,
          `--listen-client-urls=${client}`,
          `--advertise-client-urls=${client}`,
          `--listen-peer-urls=${peer}`,
          `--initial-advertise-peer-urls=${peer}`,
          `--initial-cluster=default=${peer}`,
          // Test data is disposable: skipping fsync makes etcd fast on any disk.
          '--unsafe-no-fsync',
          '--log-level=warn',
          '--quota-backend-bytes=8589934592',
        ],
        logFile: settings.logFile,
        detached: settings.detached,
        ...(settings.launcher ? { launcher: settings.launcher } : {}),
      },
      `${client}/health`,
    );
    this.clientURL = client;
  }

  static async create(settings: EtcdSettings): Promise<Etcd> {
    return new Etcd(settings, await freePort(), await freePort());
  }
}
