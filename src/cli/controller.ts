// `cluster-registry controller`: the long-running process, with upstream's flags and
// environment variables (a flag given on the command line wins over the environment).
import { Command, Option } from 'commander';
import { stringify } from 'yaml';
import { createLogger } from '../kube/index.ts';
import { resolveConfig, SETTINGS } from '../manager/config.ts';
import { runController } from '../manager/controller.ts';
import { versionLine } from './version.ts';

export function controllerCommand(): Command {
  const cmd = new Command('controller')
    .description('run the cluster registry controller against the local cluster')
    .option('--version', 'print the version and exit')
    .option('--dump-config', 'print the resolved configuration as YAML and exit');
  for (const s of SETTINGS) {
    if (s.envOnly) continue;
    // Booleans take pflag's forms: --flag, --flag=true, --flag=false.
    const arg = typeof s.defaultValue === 'boolean' ? '[bool]' : '<value>';
    cmd.addOption(new Option(`--${s.flag} ${arg}`, `${s.description} (env ${s.env}, default ${JSON.stringify(s.defaultValue)})`));
  }
  cmd.action(async (opts: Record<string, unknown>) => {
    if (opts['version'] === true || process.env['VERSION'] === 'true') {
      process.stdout.write(versionLine() + '\n');
      return;
    }
    const flags: Record<string, string> = {};
    for (const s of SETTINGS) {
      if (s.envOnly) continue;
      const key = camel(s.flag);
      if (cmd.getOptionValueSource(key) !== 'cli') continue;
      const v = opts[key];
      flags[s.flag] = v === true ? 'true' : String(v);
    }
    const cfg = resolveConfig(flags, process.env);
    if (opts['dumpConfig'] === true || process.env['DUMP_CONFIG'] === 'true') {
      process.stdout.write(stringify(cfg));
      return;
    }
    const log = createLogger({ format: cfg.log.format, verbosity: cfg.log.verbosity, base: { component: 'cluster-registry-controller' } });
    const abort = new AbortController();
    let signals = 0;
    const onSignal = (sig: NodeJS.Signals): void => {
      // A second signal means "now": exit without waiting for the graceful shutdown.
      if (++signals > 1) process.exit(1);
      log.info({ signal: sig }, 'shutting down');
      abort.abort();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // A promise nobody awaited failed: a bug, and one that input from a peer might reach. Logged
    // loudly instead of ending the process, so one bad object cannot restart the controller forever.
    process.on('unhandledRejection', (reason) => {
      log.error({ error: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason) }, 'unhandled promise rejection (a bug: please report it)');
    });
    log.info({ version: versionLine() }, 'starting');
    try {
      await runController(cfg, log, abort.signal);
    } catch (err) {
      log.error({ error: err instanceof Error ? err.message : String(err) }, 'controller failed');
      process.exitCode = 1;
    }
    log.info('stopped');
    // Everything has been stopped; a handle a library left open must not keep the process alive.
    setTimeout(() => process.exit(), 5000).unref();
  });
  return cmd;
}

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}
