// What the scaling benchmark's measurements say: per-cluster figures at each group size, straight
// lines fitted through them (each controller watches and health-checks N-1 peers, so its cost
// should grow as a + b·N), and those lines carried out to a group far larger than this machine holds.

/** Requests a controller sent, to its own API server and to its peers'. */
export interface Requests {
  own: number;
  peers: number;
}

/** One member of a measured group: its controller and its API server. */
export interface MemberFigures {
  /** CPU seconds (user and system) during the idle window. */
  idleControllerCpu: number;
  idleApiserverCpu: number;
  /** CPU seconds while the workload converged. */
  syncControllerCpu: number;
  syncApiserverCpu: number;
  /** The API server's CPU seconds while raw clients made the same writes. */
  rawApiserverCpu: number;
  /** The controller's RSS seconds after the workload converged. */
  controllerRssMiB: number;
  /** The controller's anonymous resident memory then: what it allocated, without the pages of its binary. */
  controllerAnonMiB: number;
  /** The controller's RSS a while later, the objects held and nothing to do: what a group at rest keeps (absent from results written before it was read). */
  controllerRestRssMiB?: number;
  apiserverRssMiB: number;
  /** Requests its controller sent during the idle window and while the workload converged. */
  idleRequests: Requests;
  syncRequests: Requests;
  /** Requests its API server received from all the group's controllers during the idle window. */
  idleRequestsServed: number;
  /** TCP connections open to its API server after the workload, from its own controller and from all the others. */
  connectionsServed: { own: number; peers: number };
}

/** One group size: a full mesh of `clusters` members; cluster1 (members[0]) holds the sources. */
export interface ScalingPoint {
  clusters: number;
  /** From the first create on cluster1 until every other member held a copy of every object. */
  convergeMs: number;
  /** Raw clients making the same writes at once: the objects on cluster1 and a copy on every other member. */
  rawMs: number;
  members: MemberFigures[];
}

export interface ScalingSamples {
  /** Objects the workload creates on cluster1 at each size. */
  objects: number;
  idleMs: number;
  points: ScalingPoint[];
  /** The same workload with upstream's Go controller in every member, when it ran. */
  upstream?: ScalingPoint[];
}

/** Per-cluster figures of one group size (means over members unless said otherwise). */
export interface ScalingRow {
  clusters: number;
  convergeS: number;
  rawS: number;
  /** Controller CPU per copy written, over the members that received copies. */
  controllerMsPerCopy: number;
  /** API server CPU per create made by raw clients, over the same members. */
  apiserverMsPerCreate: number;
  /** Controller and API server CPU while the workload converged, per member, and over all members. */
  syncControllerCpu: number;
  syncControllerCpuTotal: number;
  syncApiserverCpu: number;
  rawApiserverCpu: number;
  idleControllerMillicores: number;
  idleApiserverMillicores: number;
  controllerRssMiB: number;
  controllerAnonMiB: number;
  controllerRestRssMiB: number;
  apiserverRssMiB: number;
  /** Requests per second a controller sends when nothing changes. */
  idleRequestsPerSecond: number;
  /** Requests per second an API server receives from the group's controllers when nothing changes. */
  idleRequestsServedPerSecond: number;
  /** Requests the receiving controllers sent per copy. */
  requestsPerCopy: number;
  connectionsPerApiserver: number;
  /** Of those, what each other member's controller holds. */
  connectionsPerPeer: number;
}

export interface Fit {
  a: number;
  b: number;
  /** Coefficient of determination: 1 when the line passes through every point. */
  r2: number;
}

const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);
export const mean = (xs: readonly number[]) => (xs.length ? sum(xs) / xs.length : NaN);

/** The least-squares line y = a + b·x. */
export function linearFit(xs: readonly number[], ys: readonly number[]): Fit {
  const mx = mean(xs);
  const my = mean(ys);
  const sxx = sum(xs.map((x) => (x - mx) ** 2));
  const sxy = sum(xs.map((x, i) => (x - mx) * ((ys[i] ?? 0) - my)));
  const b = sxx === 0 ? 0 : sxy / sxx;
  const a = my - b * mx;
  const ssTot = sum(ys.map((y) => (y - my) ** 2));
  const ssRes = sum(ys.map((y, i) => (y - (a + b * (xs[i] ?? 0))) ** 2));
  return { a, b, r2: ssTot === 0 ? 1 : 1 - ssRes / ssTot };
}

/** Per-cluster rows of our points, or of `points` (upstream's) measured with the same workload. */
export function scalingRows(s: ScalingSamples, points: readonly ScalingPoint[] = s.points): ScalingRow[] {
  return points.map((p) => {
    const peers = p.members.slice(1);
    const copies = s.objects * peers.length;
    const m = (pick: (f: MemberFigures) => number, of = p.members) => mean(of.map(pick));
    const perSecond = 1000 / s.idleMs;
    return {
      clusters: p.clusters,
      convergeS: p.convergeMs / 1000,
      rawS: p.rawMs / 1000,
      controllerMsPerCopy: (m((f) => f.syncControllerCpu, peers) / s.objects) * 1000,
      apiserverMsPerCreate: (m((f) => f.rawApiserverCpu, peers) / s.objects) * 1000,
      syncControllerCpu: m((f) => f.syncControllerCpu),
      syncControllerCpuTotal: sum(p.members.map((f) => f.syncControllerCpu)),
      syncApiserverCpu: m((f) => f.syncApiserverCpu),
      rawApiserverCpu: m((f) => f.rawApiserverCpu),
      idleControllerMillicores: m((f) => f.idleControllerCpu) * perSecond * 1000,
      idleApiserverMillicores: m((f) => f.idleApiserverCpu) * perSecond * 1000,
      controllerRssMiB: m((f) => f.controllerRssMiB),
      controllerAnonMiB: m((f) => f.controllerAnonMiB),
      controllerRestRssMiB: m((f) => f.controllerRestRssMiB ?? NaN),
      apiserverRssMiB: m((f) => f.apiserverRssMiB),
      idleRequestsPerSecond: m((f) => f.idleRequests.own + f.idleRequests.peers) * perSecond,
      idleRequestsServedPerSecond: m((f) => f.idleRequestsServed) * perSecond,
      requestsPerCopy: sum(peers.map((f) => f.syncRequests.own + f.syncRequests.peers)) / copies,
      connectionsPerApiserver: m((f) => f.connectionsServed.own + f.connectionsServed.peers),
      connectionsPerPeer: m((f) => f.connectionsServed.peers) / Math.max(1, peers.length),
    };
  });
}

/** The per-cluster figures that should grow with the number of peers, each with its line. */
const MODELLED = [
  { key: 'idleControllerMillicores', what: 'controller CPU at idle', unit: 'millicores' },
  { key: 'controllerRssMiB', what: 'controller memory (RSS)', unit: 'MiB' },
  { key: 'controllerAnonMiB', what: 'controller anonymous memory', unit: 'MiB' },
  { key: 'controllerRestRssMiB', what: 'controller memory at rest (RSS)', unit: 'MiB' },
  { key: 'idleRequestsPerSecond', what: 'requests a controller sends at idle', unit: 'req/s' },
  { key: 'idleRequestsServedPerSecond', what: 'requests an API server receives from the controllers at idle', unit: 'req/s' },
  { key: 'connectionsPerApiserver', what: 'controller connections per API server', unit: 'connections' },
  { key: 'controllerMsPerCopy', what: 'controller CPU per synced copy', unit: 'ms' },
  { key: 'convergeS', what: 'convergence of the workload', unit: 's' },
] as const satisfies readonly { key: keyof ScalingRow; what: string; unit: string }[];

/**
 * What the side-by-side comparison fits for both controllers: the figures that grow with the
 * group. CPU per copy does not (a copy's work is the same whatever N), and convergence here grows
 * with the work of the whole group sharing one machine: those are compared size by size.
 */
export const COMPARED = MODELLED.filter((m) => m.key !== 'controllerMsPerCopy' && m.key !== 'convergeS');

type Modelled = (typeof MODELLED)[number]['key'];

export function fits(rows: readonly ScalingRow[]): Record<Modelled, Fit> {
  const xs = rows.map((r) => r.clusters);
  return Object.fromEntries(MODELLED.map((m) => [m.key, linearFit(xs, rows.map((r) => r[m.key]))])) as Record<Modelled, Fit>;
}

const at = (f: Fit, n: number) => f.a + f.b * n;

/** A figure for the report, `-` where there is none. */
export function num(v: number, digits = 0): string {
  return Number.isFinite(v) ? v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-';
}

/** The mean CPU a controller spends per copy: a copy's work does not depend on the group's size. */
const msPerCopy = (rows: readonly ScalingRow[]) => mean(rows.map((r) => r.controllerMsPerCopy));

/** How each modelled figure grows with the group's size, one line each. */
export function growthLines(rows: readonly ScalingRow[]): string[] {
  const f = fits(rows);
  const perCopy = linearFit(
    rows.map((r) => r.clusters),
    rows.map((r) => r.controllerMsPerCopy),
  );
  return [
    ...MODELLED.filter((m) => m.key !== 'controllerMsPerCopy').map((m) => `${m.what}: ${num(f[m.key].a, 2)} + ${num(f[m.key].b, 3)}·N ${m.unit} (r² ${num(f[m.key].r2, 2)})`),
    `controller CPU per synced copy: ${num(msPerCopy(rows), 2)} ms on average, ${num(perCopy.b, 3)} ms more per added cluster (noise unless far from 0)`,
  ];
}

/** One figure fitted for both controllers: the per-cluster slopes and their ratio (ours over Go's). */
export interface SlopeComparison {
  key: Modelled;
  what: string;
  unit: string;
  ours: Fit;
  upstream: Fit;
  /** Ours over Go's slope: below 1, each added cluster costs ours less. */
  slopeRatio: number;
}

export function compareSlopes(ours: readonly ScalingRow[], upstream: readonly ScalingRow[]): SlopeComparison[] {
  const [fo, fu] = [fits(ours), fits(upstream)];
  return COMPARED.map((m) => ({ key: m.key, what: m.what, unit: m.unit, ours: fo[m.key], upstream: fu[m.key], slopeRatio: fo[m.key].b / fu[m.key].b }));
}

/** The comparison as lines of text, one per figure. */
export function slopeLines(c: readonly SlopeComparison[]): string[] {
  const line = (f: Fit) => `${num(f.a, 2)} + ${num(f.b, 3)}·N`;
  return c.map((x) => `${x.what} (${x.unit}): ours ${line(x.ours)} (r² ${num(x.ours.r2, 2)}), Go ${line(x.upstream)} (r² ${num(x.upstream.r2, 2)}); slope ratio ${num(x.slopeRatio, 2)}`);
}

/**
 * What a full mesh of `n` clusters would need, each on its own machine, carried out from the lines
 * fitted here (so, on paper: a straight line measured up to a handful of members, stretched far).
 */
export function estimateLines(rows: readonly ScalingRow[], objects: number, n: number): string[] {
  const f = fits(rows);
  const cpu = at(f.idleControllerMillicores, n);
  const busy = at(f.controllerRssMiB, n);
  // Results of runs that read no memory at rest carry the reading right after converging instead, and say so.
  const atRest = Number.isFinite(f.controllerRestRssMiB.b);
  const rss = atRest ? at(f.controllerRestRssMiB, n) : busy;
  const served = at(f.idleRequestsServedPerSecond, n);
  const conns = at(f.connectionsPerApiserver, n);
  const perCopy = msPerCopy(rows);
  return [
    `Per cluster, at idle: the controller uses about ${num(cpu)} millicores (${num(cpu / 1000, 2)} cores) and ${num(rss)} MiB with ${num(objects)} synced objects (${atRest ? `${num(busy)} MiB right after they converged` : 'read right after they converged: this run read none at rest'}); the whole group about ${num((cpu * n) / 1000, 1)} cores and ${num((rss * n) / 1024, 1)} GiB of controllers.`,
    `Per API server: about ${num(conns)} connections from the ${num(n)} controllers (${num(mean(rows.map((r) => r.connectionsPerPeer)), 1)} from each other member's) and ${num(served, 1)} requests/s from them when nothing changes (each member keeps its watches and health checks on the other ${num(n - 1)}).`,
    `A change to one source object makes ${num(n - 1)} copies, one per other member, each costing its controller about ${num(perCopy, 2)} ms of CPU, so the group spends about ${num((perCopy * (n - 1)) / 1000, 2)} CPU seconds per change, spread over the members.`,
    `Growth is linear per cluster (each controller adds a watch and a health check per peer), hence quadratic for the group as a whole: N·(a + b·N).`,
  ];
}
