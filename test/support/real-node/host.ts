// What a real node does to the host outside its own namespaces, and its undoing. Only two things
// reach the host by design: the kubelet's cgroup root (one directory per cgroup v1 hierarchy,
// named after the node) and the kernel settings the kubelet insists on, which are machine-wide.
// Both are undone by name: the cgroups are emptied and removed, and a setting is written back
// only while it still holds the kubelet's value (someone else's later change stays). A snapshot
// of the host taken before (`HostSnapshot`) is the test's check that nothing else changed.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { attempt, run } from '../exec.ts';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** The settings the kubelet makes (its kernel tunables), with the value it gives each. */
export const KUBELET_SYSCTLS: Readonly<Record<string, string>> = {
  'vm.overcommit_memory': '1',
  'vm.panic_on_oom': '0',
  'kernel.panic': '10',
  'kernel.panic_on_oops': '1',
  'kernel.keys.root_maxkeys': '1000000',
  'kernel.keys.root_maxbytes': '25000000',
};

const sysctlPath = (key: string): string => `/proc/sys/${key.replace(/\./g, '/')}`;

function readSysctl(key: string): string | undefined {
  try {
    return readFileSync(sysctlPath(key), 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The cgroup v1 hierarchies (a v2-only host has none, and is refused before anything starts). */
export function cgroupHierarchies(): string[] {
  const mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n');
  return mounts.filter((l) => l.split(' ')[2] === 'cgroup').map((l) => l.split(' ')[1] ?? '').filter((p) => p.startsWith(`${CGROUP_ROOT}/`));
}

/** What the node changed on the host, by name, so that a run killed before its stop can be undone by the next. */
export interface HostChanges {
  /** The cgroup the node's Pods live under, in every hierarchy (e.g. `/crn1a2b3c`). */
  readonly cgroup: string;
  /** Each kubelet setting's value before the node started. */
  readonly sysctlsBefore: Readonly<Record<string, string>>;
}

/** What the node will change: its cgroup root, and the kubelet settings' values now. Changes nothing. */
export function hostChanges(cgroup: string): HostChanges {
  if (cgroupHierarchies().length === 0) throw new Error('a real node here needs cgroup v1 hierarchies under /sys/fs/cgroup (this host has none)');
  const sysctlsBefore = Object.fromEntries(Object.keys(KUBELET_SYSCTLS).flatMap((k) => {
    const v = readSysctl(k);
    return v === undefined ? [] : [[k, v]];
  }));
  return { cgroup, sysctlsBefore };
}

/** Makes the cgroup root the kubelet requires to exist, in every hierarchy. */
export function prepareHost(changes: HostChanges): void {
  for (const h of cgroupHierarchies()) {
    const dir = join(h, changes.cgroup);
    mkdirSync(dir, { recursive: true });
    // A cpuset takes no process before it has CPUs and memory nodes.
    if (existsSync(join(h, 'cpuset.cpus'))) {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(dir, f), readFileSync(join(h, f), 'utf8'));
    }
  }
}

/**
 * Kills what still runs under the node's cgroup and removes it, in every hierarchy (the unified
 * one too: runc adds the containers there), then writes back each kubelet setting that still holds
 * the kubelet's value. Returns what could not be undone.
 */
export async function undoHost(changes: HostChanges): Promise<string[]> {
  const dirs = [...cgroupHierarchies(), `${CGROUP_ROOT}/unified`].map((h) => join(h, changes.cgroup)).filter((d) => existsSync(d));
  for (let round = 0; round < 40; round++) {
    const left = dirs.filter((d) => existsSync(d));
    if (left.length === 0) break;
    for (const d of left) {
      for (const sub of subtree(d)) for (const pid of readLines(join(sub, 'cgroup.procs'))) killQuietly(Number(pid));
      for (const sub of subtree(d).reverse()) {
        try {
          rmdirSync(sub);
        } catch {
          // a process still exiting: the next round
        }
      }
    }
    await sleep(250);
  }
  const failed = dirs.filter((d) => existsSync(d)).map((d) => `cgroup ${d}`);
  for (const [key, value] of Object.entries(changes.sysctlsBefore)) {
    if (readSysctl(key) === KUBELET_SYSCTLS[key] && value !== KUBELET_SYSCTLS[key]) {
      try {
        writeFileSync(sysctlPath(key), value);
      } catch (err) {
        failed.push(`sysctl ${key}: ${(err as Error).message}`);
      }
    }
  }
  return failed;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The directory and every cgroup below it, parents first. */
function subtree(path: string): string[] {
  if (!existsSync(path)) return [];
  const out = [path];
  for (const e of readdirSync(path)) {
    const child = join(path, e);
    if (statSync(child, { throwIfNoEntry: false })?.isDirectory()) out.push(...subtree(child));
  }
  return out;
}

function readLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

// Counters and clocks the kernel moves on its own, and per-link keys of links that come and go.
const VOLATILE_SYSCTL = /^(fs\.(dentry-state|inode-nr|inode-state|file-nr|quota\.)|kernel\.(random\.|ns_last_pid|pty\.nr|sched_domain)|net\.netfilter\.nf_conntrack_count|net\.ipv[46]\.(route\.gc_|neigh\.))/;
/** Paths the kubelet, containerd and the CNI plugins fix on a host; the node keeps them in its own tmpfs. */
const HOST_PATHS = ['/run/containerd', '/run/netns', '/var/lib/cni', '/var/lib/kubelet', '/var/lib/containerd', '/var/log/containers', '/var/log/pods', '/etc/cni', '/opt/cni'];

/** The host as a node could change it, taken before it starts; `differences()` is what changed since. */
export class HostSnapshot {
  private readonly state: Map<string, string>;

  private constructor(state: Map<string, string>) {
    this.state = state;
  }

  static async take(): Promise<HostSnapshot> {
    return new HostSnapshot(await readHost());
  }

  /** Every item added, removed or changed since the snapshot. */
  async differences(): Promise<string[]> {
    const now = await readHost();
    const found: string[] = [];
    for (const [k, v] of now) {
      // A kernel module loaded on first use (conntrack, the bridge's netfilter) adds its settings:
      // new keys there are the kernel's, not a change of ours; a changed value still counts.
      if (!this.state.has(k) && /^sysctl net\.(netfilter\.|nf_conntrack_max|bridge\.)/.test(k)) continue;
      if (this.state.get(k) !== v) found.push(this.state.has(k) ? `${k}: ${v} (was ${this.state.get(k) ?? ''})` : `${k}: ${v} (new)`);
    }
    for (const k of this.state.keys()) if (!now.has(k)) found.push(`${k} (gone)`);
    return found;
  }
}

/** One flat map of what could change: sysctls, iptables and nftables, mounts, links, network namespaces, cgroups, paths. */
async function readHost(): Promise<Map<string, string>> {
  const state = new Map<string, string>();
  for (const line of (await attempt('sysctl', ['-a'])).stdout.split('\n')) {
    const i = line.indexOf(' = ');
    const key = line.slice(0, i);
    if (i > 0 && !VOLATILE_SYSCTL.test(key) && !/^net\.ipv[46]\.(conf|neigh)\.(veth|crn)/.test(key)) state.set(`sysctl ${key}`, line.slice(i + 3));
  }
  for (const family of ['iptables', 'ip6tables']) {
    const lines = (await attempt(`${family}-save`, [])).stdout.split('\n').filter((l) => l.startsWith(':') || l.startsWith('-A ') || l.startsWith('*'));
    let table = '';
    const count = new Map<string, number>();
    for (const l of lines) {
      if (l.startsWith('*')) table = l.slice(1);
      else {
        const key = `${family} ${table} ${l.startsWith(':') ? `chain ${l.slice(1).split(' ')[0] ?? ''}` : `rule ${l}`}`;
        const n = (count.get(key) ?? 0) + 1;
        count.set(key, n);
        state.set(n > 1 ? `${key} #${n}` : key, 'present');
      }
    }
  }
  for (const l of (await attempt('nft', ['list', 'tables'])).stdout.split('\n').filter(Boolean)) state.set(`nft ${l}`, 'present');
  for (const l of readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter(Boolean)) state.set(`mount ${l.split(' ')[4] ?? ''}`, 'present');
  for (const l of (await run('ip', ['-o', 'link', 'show'])).split('\n').filter(Boolean)) state.set(`link ${(l.split(': ')[1] ?? '').split('@')[0] ?? ''}`, 'present');
  for (const h of [...cgroupHierarchies(), `${CGROUP_ROOT}/unified`]) {
    if (!existsSync(h)) continue;
    for (const d of readdirSync(h)) if (statSync(join(h, d), { throwIfNoEntry: false })?.isDirectory()) state.set(`cgroup ${join(h, d)}`, 'present');
  }
  for (const p of HOST_PATHS) {
    if (!existsSync(p)) continue;
    state.set(`path ${p}`, 'present');
    if (statSync(p).isDirectory()) for (const e of readdirSync(p)) state.set(`path ${join(p, e)}`, 'present');
  }
  return state;
}
