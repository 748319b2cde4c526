// What a real node changes on the host, recorded before it starts and undone after it stops:
// sysctls (the kubelet sets some, the bridge plugin turns on forwarding), iptables rules and chains
// of both families (kube-proxy, CNI), network links and namespaces, mounts, and cgroups. The record
// is also the test's own check that nothing was left: `leftovers()` lists what still differs.
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { attempt, run } from './exec.ts';

const CGROUP_V1 = '/sys/fs/cgroup';
const NETNS_DIR = '/run/netns';

// Counters and clocks the kernel moves on its own: never a change of ours.
const VOLATILE_SYSCTL = /^(fs\.(dentry-state|inode-nr|inode-state|file-nr|quota\.)|kernel\.(random\.|ns_last_pid|pty\.nr|sched_domain)|net\.netfilter\.nf_conntrack_count|net\.ipv[46]\.route\.gc_|net\.ipv6\.neigh\.|net\.ipv4\.neigh\.)/;
// Per-interface keys of links that come and go (veths, bridges): judged by the link check instead.
const PER_LINK_SYSCTL = /^net\.(ipv4|ipv6)\.(conf|neigh)\.([^.]+)\./;

type Family = 'iptables' | 'ip6tables';
const FAMILIES: readonly Family[] = ['iptables', 'ip6tables'];
const TABLES = ['filter', 'nat', 'mangle', 'raw'] as const;

interface Rules {
  /** chain names per table */
  readonly chains: Map<string, Set<string>>;
  /** `-A CHAIN …` lines per table, as iptables-save prints them */
  readonly rules: Map<string, string[]>;
}

async function readRules(family: Family): Promise<Rules> {
  const chains = new Map<string, Set<string>>();
  const rules = new Map<string, string[]>();
  for (const table of TABLES) {
    const r = await attempt(`${family}-save`, ['-t', table]);
    const lines = r.code === 0 ? r.stdout.split('\n') : [];
    chains.set(table, new Set(lines.filter((l) => l.startsWith(':')).map((l) => l.slice(1).split(' ')[0] ?? '')));
    rules.set(table, lines.filter((l) => l.startsWith('-A ')));
  }
  return { chains, rules };
}

async function readSysctls(): Promise<Map<string, string>> {
  const out = (await attempt('sysctl', ['-a'])).stdout;
  const map = new Map<string, string>();
  for (const line of out.split('\n')) {
    const i = line.indexOf(' = ');
    if (i > 0) map.set(line.slice(0, i), line.slice(i + 3));
  }
  return map;
}

function mountPoints(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ')[4] ?? '');
}

async function links(): Promise<Set<string>> {
  const out = await run('ip', ['-o', 'link', 'show']);
  return new Set(out.split('\n').filter(Boolean).map((l) => (l.split(': ')[1] ?? '').split('@')[0] ?? ''));
}

function netns(): Set<string> {
  return new Set(existsSync(NETNS_DIR) ? readdirSync(NETNS_DIR) : []);
}

function cgroupControllers(): string[] {
  return readdirSync(CGROUP_V1).filter((c) => statSync(join(CGROUP_V1, c)).isDirectory() && c !== 'unified');
}

export class HostRecord {
  private readonly sysctls: Map<string, string>;
  private readonly rules: Map<Family, Rules>;
  private readonly mounts: Set<string>;
  private readonly links: Set<string>;
  private readonly netns: Set<string>;
  private readonly cgroups: Map<string, Set<string>>;

  private constructor(sysctls: Map<string, string>, rules: Map<Family, Rules>, mounts: Set<string>, linkNames: Set<string>, namespaces: Set<string>, cgroups: Map<string, Set<string>>) {
    this.sysctls = sysctls;
    this.rules = rules;
    this.mounts = mounts;
    this.links = linkNames;
    this.netns = namespaces;
    this.cgroups = cgroups;
  }

  /** The record as JSON, kept on disk while a node runs: a run killed before its stop is undone by the next one. */
  toJSON(): unknown {
    const sets = (m: Map<string, Set<string>>) => Object.fromEntries([...m].map(([k, v]) => [k, [...v]]));
    return {
      sysctls: Object.fromEntries(this.sysctls),
      rules: Object.fromEntries([...this.rules].map(([f, r]) => [f, { chains: sets(r.chains), rules: Object.fromEntries(r.rules) }])),
      mounts: [...this.mounts],
      links: [...this.links],
      netns: [...this.netns],
      cgroups: sets(this.cgroups),
    };
  }

  static fromJSON(text: string): HostRecord {
    const j = JSON.parse(text) as { sysctls: Record<string, string>; rules: Record<Family, { chains: Record<string, string[]>; rules: Record<string, string[]> }>; mounts: string[]; links: string[]; netns: string[]; cgroups: Record<string, string[]> };
    const sets = (o: Record<string, string[]>) => new Map(Object.entries(o).map(([k, v]) => [k, new Set(v)]));
    const rules = new Map(FAMILIES.map((f) => [f, { chains: sets(j.rules[f].chains), rules: new Map(Object.entries(j.rules[f].rules)) }]));
    return new HostRecord(new Map(Object.entries(j.sysctls)), rules, new Set(j.mounts), new Set(j.links), new Set(j.netns), sets(j.cgroups));
  }

  static async take(): Promise<HostRecord> {
    const rules = new Map<Family, Rules>();
    for (const f of FAMILIES) rules.set(f, await readRules(f));
    const cgroups = new Map(cgroupControllers().map((c) => [c, new Set(readdirSync(join(CGROUP_V1, c)).filter((d) => statSync(join(CGROUP_V1, c, d)).isDirectory()))]));
    return new HostRecord(await readSysctls(), rules, new Set(mountPoints()), await links(), netns(), cgroups);
  }

  /**
   * Undoes every change found, whatever stopped half-way: kills what runs in cgroups made since,
   * unmounts, deletes links and namespaces, iptables rules and chains, and writes back sysctls.
   */
  async undo(): Promise<void> {
    for (const path of this.newCgroups()) killCgroup(path);
    for (const m of mountPoints().filter((m) => !this.mounts.has(m)).reverse()) await attempt('umount', ['-l', m]);
    for (const n of netns()) if (!this.netns.has(n)) await attempt('ip', ['netns', 'delete', n]);
    for (const l of await links()) if (!this.links.has(l)) await attempt('ip', ['link', 'delete', l]);
    for (const f of FAMILIES) await this.undoRules(f);
    for (const path of this.newCgroups()) removeCgroup(path);
    const now = await readSysctls();
    for (const [key, value] of this.sysctls) {
      if (now.get(key) !== value && !VOLATILE_SYSCTL.test(key) && !PER_LINK_SYSCTL.test(key)) {
        try {
          writeFileSync(`/proc/sys/${key.replace(/\./g, '/')}`, value.replace(/\t/g, ' '));
        } catch {
          // read-only or refused: leftovers() reports it
        }
      }
    }
  }

  /** What still differs from the record; empty when the host is as it was. */
  async leftovers(): Promise<string[]> {
    const found: string[] = [];
    const now = await readSysctls();
    for (const [key, value] of this.sysctls) {
      if (now.has(key) && now.get(key) !== value && !VOLATILE_SYSCTL.test(key) && !PER_LINK_SYSCTL.test(key)) found.push(`sysctl ${key} = ${now.get(key)} (was ${value})`);
    }
    for (const f of FAMILIES) {
      const before = this.rules.get(f);
      const after = await readRules(f);
      for (const table of TABLES) {
        for (const c of after.chains.get(table) ?? []) if (!before?.chains.get(table)?.has(c)) found.push(`${f} chain ${table}/${c}`);
        const had = before?.rules.get(table) ?? [];
        for (const r of after.rules.get(table) ?? []) if (!had.includes(r)) found.push(`${f} rule ${table}: ${r}`);
      }
    }
    for (const m of mountPoints()) if (!this.mounts.has(m)) found.push(`mount ${m}`);
    for (const l of await links()) if (!this.links.has(l)) found.push(`link ${l}`);
    for (const n of netns()) if (!this.netns.has(n)) found.push(`network namespace ${n}`);
    for (const path of this.newCgroups()) found.push(`cgroup ${path}`);
    return found;
  }

  private newCgroups(): string[] {
    return [...this.cgroups].flatMap(([c, had]) =>
      existsSync(join(CGROUP_V1, c))
        ? readdirSync(join(CGROUP_V1, c))
            .filter((d) => !had.has(d) && statSync(join(CGROUP_V1, c, d)).isDirectory())
            .map((d) => join(CGROUP_V1, c, d))
        : [],
    );
  }

  /** Deletes the rules added to chains that were there, then the chains added (they may refer to each other). */
  private async undoRules(family: Family): Promise<void> {
    const before = this.rules.get(family);
    const after = await readRules(family);
    const script: string[] = [];
    for (const table of TABLES) {
      const hadChains = before?.chains.get(table) ?? new Set<string>();
      const newChains = [...(after.chains.get(table) ?? [])].filter((c) => !hadChains.has(c));
      const had = [...(before?.rules.get(table) ?? [])];
      const added = (after.rules.get(table) ?? []).filter((r) => {
        const i = had.indexOf(r);
        if (i >= 0) had.splice(i, 1);
        return i < 0;
      });
      const inOldChains = added.filter((r) => hadChains.has(r.split(' ')[1] ?? ''));
      if (inOldChains.length === 0 && newChains.length === 0) continue;
      script.push(`*${table}`, ...inOldChains.map((r) => `-D${r.slice(2)}`), ...newChains.map((c) => `-F ${c}`), ...newChains.map((c) => `-X ${c}`), 'COMMIT');
    }
    if (script.length > 0) await attempt(`${family}-restore`, ['--noflush'], { input: `${script.join('\n')}\n` });
  }
}

/** Every process in a cgroup subtree, killed (the pods' processes and their sandboxes). */
function killCgroup(path: string): void {
  for (const dir of subtree(path)) {
    for (const pid of readLines(join(dir, 'cgroup.procs'))) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

function removeCgroup(path: string): void {
  for (const dir of subtree(path).reverse()) {
    try {
      rmdirSync(dir);
    } catch {
      // still has a process exiting: leftovers() reports it
    }
  }
}

/** The directory and every cgroup below it, parents first. */
function subtree(path: string): string[] {
  if (!existsSync(path)) return [];
  const out = [path];
  for (const e of readdirSync(path)) {
    const child = join(path, e);
    if (statSync(child).isDirectory()) out.push(...subtree(child));
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
