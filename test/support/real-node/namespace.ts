// The network and mount namespace a real node lives in, so that what its processes change stays
// there and goes with it: iptables rules and chains (kube-proxy, CNI), forwarding, the Pods'
// bridge, veths and network namespaces, and every mount (containers' root filesystems, volumes).
// Inside, /run, /var/lib and /var/log are private tmpfs, so the paths the kubelet, containerd and
// the CNI plugins fix there (shim sockets, runc state, CNI results, device-plugin sockets, log
// links) never reach the host's. A veth pair joins it to the host: the host end carries the
// address sandbox clusters listen on for Pods to reach, the node end the node's own.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { attempt, run } from '../exec.ts';

export interface NodeAddresses {
  /** The host end of the veth: sandbox clusters started on it are reachable from Pods. */
  readonly host: string;
  /** The node's end: its API server, kubelet and services listen here. */
  readonly node: string;
  readonly podSubnet: string;
  readonly serviceRange: string;
}

/**
 * A /30 in 100.64.0.0/10 for the veth, and /24s in 172.16.0.0/12 for Pods and Services, that no
 * route or address of this machine covers (the sandbox's Services use 10.0.0.0/24).
 */
export async function pickAddresses(): Promise<NodeAddresses> {
  const used = (await run('ip', ['-4', '-o', 'route', 'show', 'table', 'all'])) + (await run('ip', ['-4', '-o', 'addr', 'show']));
  const prefix = (s: string) => s.split('.').slice(0, 2).join('.');
  const random = (n: number) => Math.floor(Math.random() * n);
  for (let i = 0; i < 50; i++) {
    const base = `100.${64 + random(64)}.${random(256)}.${4 * random(64)}`;
    const [a, b, c, d] = base.split('.').map(Number) as [number, number, number, number];
    const second = 16 + random(16);
    const third = random(128);
    const candidate = { host: `${a}.${b}.${c}.${d + 1}`, node: `${a}.${b}.${c}.${d + 2}`, podSubnet: `172.${second}.${third}.0/24`, serviceRange: `172.${second}.${third + 128}.0/24` };
    if (!used.includes(`${prefix(candidate.host)}.`) && !used.includes(`${prefix(candidate.podSubnet)}.`)) return candidate;
  }
  throw new Error('no free private address range for the node');
}

export class NodeNamespace {
  readonly link: string;
  readonly addresses: NodeAddresses;
  private readonly holder: ChildProcess;

  private constructor(link: string, addresses: NodeAddresses, holder: ChildProcess) {
    this.link = link;
    this.addresses = addresses;
    this.holder = holder;
  }

  get pid(): number {
    return this.holder.pid ?? -1;
  }

  /** The network namespace's identity: every process inside shares it, whatever its cgroup. */
  netnsInode(): number {
    return statSync(`/proc/${this.pid}/ns/net`).ino;
  }

  /**
   * Makes the namespaces (held by a process that dies with this one) and the veth between them
   * and the host. The host end is named `link`; deleting it, or the namespace's end, removes both.
   */
  static async create(link: string, addresses: NodeAddresses): Promise<NodeNamespace> {
    const setup = ['mount -t tmpfs -o mode=755 node-run /run', 'mount -t tmpfs -o mode=755 node-var-lib /var/lib', 'mount -t tmpfs -o mode=755 node-var-log /var/log', 'ip link set lo up', 'echo ready', 'exec sleep infinity'].join(' && ');
    const holder = spawn('setpriv', ['--pdeathsig', 'KILL', '--', 'unshare', '--net', '--mount', '--propagation', 'private', '--', 'sh', '-c', setup], { stdio: ['ignore', 'pipe', 'pipe'] });
    const ns = new NodeNamespace(link, addresses, holder);
    try {
      await new Promise<void>((resolve, reject) => {
        let err = '';
        holder.stderr?.on('data', (d: Buffer) => (err += d.toString()));
        holder.stdout?.once('data', () => resolve());
        holder.once('exit', (code) => reject(new Error(`the node's namespaces could not be made (exit ${code ?? 'signal'}): ${err.trim()}`)));
      });
      const netns = `/proc/${ns.pid}/ns/net`;
      await run('ip', ['link', 'add', link, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
      await run('ip', ['addr', 'add', `${addresses.host}/30`, 'dev', link]);
      await run('ip', ['link', 'set', link, 'up']);
      await ns.exec('ip', ['addr', 'add', `${addresses.node}/30`, 'dev', 'eth0']);
      await ns.exec('ip', ['link', 'set', 'eth0', 'up']);
      await ns.exec('ip', ['route', 'add', 'default', 'via', addresses.host]);
      // The Pods' answers to the host go back through the node.
      await run('ip', ['route', 'add', addresses.podSubnet, 'via', addresses.node, 'dev', link]);
      return ns;
    } catch (err) {
      await ns.destroy();
      throw err;
    }
  }

  /** What runs a command inside: nsenter execs it, so a parent-death signal set before still holds. */
  get launcher(): readonly string[] {
    return ['nsenter', `--target=${this.pid}`, '--net', '--mount', '--'];
  }

  exec(binary: string, args: readonly string[]): Promise<string> {
    const [cmd = '', ...rest] = this.launcher;
    return run(cmd, [...rest, binary, ...args]);
  }

  /** Ends the holder: with every process inside gone, the namespaces, their mounts and the veth go too. */
  async destroy(): Promise<void> {
    if (this.holder.exitCode === null && this.holder.signalCode === null) {
      const exited = new Promise((r) => this.holder.once('exit', r));
      this.holder.kill('SIGKILL');
      await exited;
    }
    // The veth goes with the namespace once nothing holds it; a moment may pass.
    for (let i = 0; i < 40 && (await linkExists(this.link)); i++) await sleep(250);
    if (await linkExists(this.link)) await attempt('ip', ['link', 'delete', this.link]);
  }
}

export async function linkExists(link: string): Promise<boolean> {
  return (await attempt('ip', ['link', 'show', link])).code === 0;
}

/** Kills every process in the network namespace of that identity (a killed run's, found by its journal). */
export function killNetns(inode: number): void {
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (statSync(`/proc/${p}/ns/net`).ino === inode) process.kill(Number(p), 'SIGKILL');
    } catch {
      // exited meanwhile, or not ours to see
    }
  }
}

/** Whether a process is alive and is the same one that was recorded (its start time in clock ticks matches). */
export function processStartTime(pid: number): string | undefined {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return undefined;
  try {
    return readFileSync(stat, 'utf8').split(') ')[1]?.split(' ')[19];
  } catch {
    return undefined;
  }
}
