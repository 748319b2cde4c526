// A candidate process for the leader tests: runs LeaderElector against one Lease, campaigning
// again after a lost term as the controller does, and reports on stdout one line per event,
// `<event> <id> <Date.now()>`, so two processes' lines compare on one clock:
//   new-leader <leader>   the elector saw a (new) holder
//   leading <id>          leader work started
//   aborted <id>          leader work was told to stop (its signal aborted)
//   stopped-work <id>     leader work finished its cleanup (STOP_WORK_MS long)
//   stopped <id>          the elector reported the end of the term
//   lost <id>             the term ended without SIGTERM; campaigning again
// SIGTERM ends it gracefully (releasing the lease); SIGKILL is the crash case. SERVER, when set,
// replaces the kubeconfig's server (a proxy in front of the same apiserver).
import { ClusterConfig } from '../../src/kube/config.ts';
import { LeaderElector } from '../../src/kube/leader-election.ts';
import { RestClient } from '../../src/kube/rest.ts';

const env = (k: string): string => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const report = (event: string, id: string): void => console.log(`${event} ${id} ${Date.now()}`);

const conn = await ClusterConfig.fromFile(env('KUBECONFIG_PATH')).connection();
const rest = new RestClient(process.env.SERVER ? { ...conn, server: new URL(process.env.SERVER) } : conn);
const identity = env('IDENTITY');
const stopWorkMs = Number(process.env.STOP_WORK_MS ?? 0);
const ac = new AbortController();
process.on('SIGTERM', () => ac.abort());

async function work(signal: AbortSignal): Promise<void> {
  report('leading', identity);
  if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  report('aborted', identity);
  await new Promise((resolve) => setTimeout(resolve, stopWorkMs));
  report('stopped-work', identity);
}

while (!ac.signal.aborted) {
  const elector = new LeaderElector({
    rest,
    namespace: env('LEASE_NAMESPACE'),
    name: env('LEASE_NAME'),
    identity,
    leaseDurationMs: Number(env('LEASE_DURATION_MS')),
    renewDeadlineMs: Number(env('RENEW_DEADLINE_MS')),
    retryPeriodMs: Number(env('RETRY_PERIOD_MS')),
    callbacks: {
      onStartedLeading: work,
      onStoppedLeading: () => report('stopped', identity),
      onNewLeader: (id) => report('new-leader', id),
    },
  });
  await elector.start(ac.signal);
  if (!ac.signal.aborted) report('lost', identity);
}
rest.close();
