// The `cluster-registry` command line.
import { Command } from 'commander';
import { completionCommand } from './completion.ts';
import { controllerCommand } from './controller.ts';
import { dashboardCommand } from './dashboard.ts';
import { explainCommand } from './explain.ts';
import { hubCommand } from './hub.ts';
import { joinCommand } from './join.ts';
import { leaveCommand } from './leave.ts';
import { ruleCommand } from './rule.ts';
import { sandboxCommand } from './sandbox.ts';
import { statusCommand } from './status.ts';
import { traceCommand } from './trace.ts';
import { versionLine } from './version.ts';

const program = new Command()
  .name('cluster-registry')
  .description('Keeps a group of Kubernetes clusters in sync: the registry of members and any resource, as ResourceSyncRules say.')
  .version(versionLine(), '--version')
  .showHelpAfterError()
  .addCommand(controllerCommand())
  .addCommand(joinCommand())
  .addCommand(leaveCommand())
  .addCommand(statusCommand())
  .addCommand(ruleCommand())
  .addCommand(explainCommand())
  .addCommand(traceCommand())
  .addCommand(dashboardCommand())
  .addCommand(hubCommand())
  .addCommand(sandboxCommand());
program.addCommand(completionCommand(() => program));

try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
