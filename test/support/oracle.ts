// Client for tools/oracle, the Go reference program: one long-lived process per test file,
// requests and responses as JSON lines, answered in order.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

export const ORACLE_BIN = fileURLToPath(new URL('../../.cache/tools/bin/oracle', import.meta.url));

export type OracleResponse = { ok: true; result: unknown } | { ok: false; error: string };

export class Oracle {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly pending: ((r: OracleResponse) => void)[] = [];
  private stderr = '';

  constructor() {
    if (!existsSync(ORACLE_BIN)) {
      throw new Error(`oracle binary missing at ${ORACLE_BIN}: run 'tools/build.sh oracle' (make test does)`);
    }
    this.proc = spawn(ORACLE_BIN, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    createInterface({ input: this.proc.stdout }).on('line', (line) => {
      const resolve = this.pending.shift();
      resolve?.(JSON.parse(line) as OracleResponse);
    });
    this.proc.on('exit', (code) => {
      for (const resolve of this.pending.splice(0)) {
        resolve({ ok: false, error: `oracle exited (${code}): ${this.stderr}` });
      }
    });
  }

  /** Sends one request ({op, ...fields}) and resolves with the oracle's answer. */
  call(op: string, fields: Record<string, unknown>): Promise<OracleResponse> {
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.proc.stdin.write(JSON.stringify({ op, ...fields }) + '\n');
    });
  }

  close(): void {
    this.proc.stdin.end();
    this.proc.kill();
  }
}

/**
 * The oracle of one differential test file, with its tally: the file counts cases and
 * agreements, and when it ends the oracle is closed and "<name> differential: N cases, N agree"
 * is printed.
 */
export function differentialOracle(name: string): { oracle: Oracle; tally: { cases: number; agree: number } } {
  const oracle = new Oracle();
  const tally = { cases: 0, agree: 0 };
  after(() => {
    oracle.close();
    console.log(`${name} differential: ${tally.cases} cases, ${tally.agree} agree`);
  });
  return { oracle, tally };
}

/**
 * A JSON value as the API server hands it to us: every string as Go's decoder leaves it (lone
 * surrogates become U+FFFD), which is how the oracle reads the same input.
 */
export function decodedByGo<T>(x: T): T {
  if (typeof x === 'string') return x.toWellFormed() as T;
  if (Array.isArray(x)) return x.map(decodedByGo) as T;
  if (x !== null && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k.toWellFormed(), decodedByGo(v)])) as T;
  return x;
}
