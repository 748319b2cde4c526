import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { bashCompletion } from './completion.ts';

/** A small tree shaped like the CLI's: options with values, a boolean flag, nested commands. */
function tree(): Command {
  const root = new Command('cluster-registry').option('--version');
  root.command('status').option('--kubeconfig <path>').option('--context <name>').option('-o, --output <format>');
  root.command('trace').argument('<kind>').argument('<name>').option('-n, --object-namespace <ns>').option('--diff');
  const sandbox = root.command('sandbox');
  sandbox.command('up').option('--dir <dir>').option('--join');
  sandbox.command('down').option('--dir <dir>');
  return root;
}

/** What bash completes after typing `line` (the cursor at its end) with the generated script. */
function complete(line: string): string[] {
  const words = line.split(' ');
  const script = `${bashCompletion(tree(), 'cluster-registry')}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}
_cluster_registry_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync('bash', ['-c', script], { encoding: 'utf8' }).split('\n').filter(Boolean).sort();
}

describe('shell completion', () => {
  it('completes commands, then the options of the command typed, skipping option values', () => {
    assert.deepEqual(complete('cluster-registry s'), ['sandbox', 'status']);
    assert.deepEqual(complete('cluster-registry sandbox '), ['--help', 'down', 'up']);
    assert.deepEqual(complete('cluster-registry status --kubeconfig status --c'), ['--context'], 'a value that looks like a command is a value');
    assert.deepEqual(complete('cluster-registry sandbox up --join --d'), ['--dir'], 'a flag without a value does not hide what follows');
    assert.deepEqual(complete('cluster-registry sandbox down --'), ['--dir', '--help']);
    assert.deepEqual(complete('cluster-registry status --kubeconfig = /x --c'), ['--context'], "bash splits --kubeconfig=/x at '='");
    assert.deepEqual(complete('cluster-registry status --kubeconfig '), [], 'a value: left to file completion');
    assert.deepEqual(complete('cluster-registry trace configmap status -n app --d'), ['--diff'], "a command's arguments (one that looks like a command too) leave its options to complete");
  });
});
