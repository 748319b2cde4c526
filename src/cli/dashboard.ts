// `cluster-registry dashboard`: serves the live, read-only page of the group until interrupted.
import { Command, InvalidArgumentError } from 'commander';
import { once } from 'node:events';
import { ClusterConfig, createLogger, RestClient } from '../kube/index.ts';
import { peerReadingOptions, type PeerReadingOptions } from './options.ts';

function parsePort(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 65_535) throw new InvalidArgumentError('expected a port from 0 (any free one) to 65535');
  return n;
}

export function dashboardCommand(): Command {
  return peerReadingOptions(
    new Command('dashboard').description(
      "a live, read-only web page of the group as this cluster sees it: who sees whom, members and their health, rules with what they synced from each peer and their last errors, and any object of a rule traced across the group (as trace does, with this cluster's credentials for its peers, read only when a trace is asked for)",
    ),
  )
    .option('--trace', 'offer traces of a rule\'s objects (the default where it listens on loopback only)')
    .option('--no-trace', "offer none: the peers' credentials are never read")
    .option('--address <ip>', 'IP address to listen on (or localhost); elsewhere than loopback, whoever reaches it and has the printed URL sees the group', '127.0.0.1')
    .option('--port <port>', 'port to listen on, 0 for any free one', parsePort, 8080)
    .action(async (o: PeerReadingOptions & { address: string; port: number; trace?: boolean }) => {
      // Loaded here so that a controller process, which shares this command line, never holds it.
      const { Dashboard } = await import('../ops/dashboard/server.ts');
      const { peerTracer } = await import('../ops/dashboard/group-tracer.ts');
      const { loopback } = await import('../ops/dashboard/server.ts');
      // Beyond loopback, whoever has the URL would make it read the peers: only when asked to.
      const trace = o.trace ?? loopback(o.address);
      const cfg = ClusterConfig.fromFileOrDefault(o.kubeconfig, o.context);
      const rest = new RestClient(await cfg.connection());
      const stop = new AbortController();
      const interrupted = () => stop.abort();
      process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
      try {
        const log = createLogger({ format: 'console', destination: process.stderr });
        const dashboard = await Dashboard.start({ rest, viewer: cfg.currentContext, host: o.address, port: o.port, logger: log, ...(trace ? { tracer: peerTracer(rest, { network: o.network, namespace: o.namespace }) } : {}) }, stop.signal);
        // The URL carries the page's access token: it goes to the user's terminal, never to the log.
        process.stdout.write(`dashboard of ${cfg.currentContext} at ${dashboard.url} (Ctrl-C stops it)\n`);
        await once(stop.signal, 'abort');
      } finally {
        stop.abort();
        process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
        rest.close();
      }
    });
}
