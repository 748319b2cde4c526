// A candidate process for the leader fail-over test: runs LeaderElector against one Lease and
// reports on stdout, one line per event: `new-leader <id>`, `leading <id>`, `stopped <id>`.
// SIGTERM ends it gracefully (releasing the lease); SIGKILL is the crash case.
import { ClusterConfig } from '../../src/kube/config.ts';
import { LeaderElector } from '../../src/kube/leader-election.ts';
import { RestClient } from '../../src/kube/rest.ts';

const env = (k: string): string => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};

const rest = await RestClient.fromConfig(ClusterConfig.fromFile(env('KUBECONFIG_PATH')));
const identity = env('IDENTITY');
const ac = new AbortController();
process.on('SIGTERM', () => ac.abort());
const elector = new LeaderElector({
  rest,
  namespace: env('LEASE_NAMESPACE'),
  name: env('LEASE_NAME'),
  identity,
  leaseDurationMs: Number(env('LEASE_DURATION_MS')),
  renewDeadlineMs: Number(env('RENEW_DEADLINE_MS')),
  retryPeriodMs: Number(env('RETRY_PERIOD_MS')),
  callbacks: {
    onStartedLeading: () => console.log(`leading ${identity}`),
    onStoppedLeading: () => console.log(`stopped ${identity}`),
    onNewLeader: (id) => console.log(`new-leader ${id}`),
  },
});
await elector.start(ac.signal);
rest.close();
