// Checks every group-based suite runs when it stops its group: no credential of the group (the
// reader tokens and webhook keys in the controller namespace, the controllers' and the admin's
// tokens) appears in any log our controllers wrote, and no controller of ours sent a peer anything
// but reads and access reviews.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { SECRETS, type Secret } from '../../src/core/api/resources.ts';
import type { RestClient } from '../../src/kube/index.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { SANDBOX_NAMESPACE } from '../../src/testbed/group.ts';
import { controllerSeries } from './registry.ts';

type Kubeconfig = { users?: { user?: { token?: string } }[] } | null;

const tokensIn = (kubeconfig: string): string[] => ((parse(kubeconfig) as Kubeconfig)?.users ?? []).map((u) => u.user?.token ?? '').filter((t) => t.length >= 20);

/** A private key's first line of base64: long and random enough to find, never a false match. */
const keyLine = (pem: string): string[] => pem.split('\n').filter((l) => /^[A-Za-z0-9+/]{40,}$/.test(l)).slice(0, 1);

/** Every credential of the group a log must never hold, each with what it is (said in failures instead of itself). */
export async function groupCredentials(sandbox: Sandbox, clients: ReadonlyMap<string, RestClient>): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const c of sandbox.clusters) {
    for (const t of tokensIn(c.kubeconfig)) found.set(t, `${c.name}'s admin token`);
    const dir = join(sandbox.dir, c.name);
    for (const f of readdirSync(dir).filter((f) => f.endsWith('.kubeconfig'))) for (const t of tokensIn(readFileSync(join(dir, f), 'utf8'))) found.set(t, `token of ${c.name}/${f}`);
    const rest = clients.get(c.name);
    if (!rest) continue;
    // A cluster a test left down keeps its Secrets to itself; the others still hold copies of its reader's.
    const secrets = await rest.list<Secret>(SECRETS, { namespace: SANDBOX_NAMESPACE }).then((l) => l.items, () => []);
    for (const s of secrets) {
      for (const [key, value] of Object.entries(s.data ?? {})) {
        const text = Buffer.from(value, 'base64').toString('utf8');
        const what = `${c.name}'s Secret ${s.metadata.name ?? ''} key ${key}`;
        if (key === 'kubeconfig') for (const t of tokensIn(text)) found.set(t, `token in ${what}`);
        if (/PRIVATE KEY/.test(text)) for (const l of keyLine(text)) found.set(l, `private key in ${what}`);
      }
    }
  }
  return found;
}

/** Our controllers' logs that hold any of the credentials: "<file>: <what>" (never the credential). */
export function credentialsInLogs(sandbox: Sandbox, credentials: ReadonlyMap<string, string>): string[] {
  const dir = join(sandbox.dir, 'logs');
  const leaks: string[] = [];
  for (const f of readdirSync(dir).filter((f) => f.endsWith('-controller.log') && !f.endsWith('-upstream-controller.log'))) {
    const text = readFileSync(join(dir, f), 'utf8');
    for (const [secret, what] of credentials) if (text.includes(secret)) leaks.push(`${f}: ${what}`);
  }
  return leaks;
}

/** Requests our controllers sent a peer that were not reads or access reviews (POST), by "cluster -> host method". */
export async function writesToPeers(sandbox: Sandbox, ours: readonly string[]): Promise<string[]> {
  const writes: string[] = [];
  for (const name of ours) {
    const local = new URL(sandbox.cluster(name).server).host;
    // A controller a test left stopped has nothing more to say.
    const series = await controllerSeries(sandbox, name, 'rest_client_requests_total').catch(() => []);
    for (const s of series) {
      const method = s.labels['method'] ?? '';
      if (s.labels['host'] !== local && !['GET', 'WATCH', 'POST'].includes(method) && s.value > 0) writes.push(`${name} -> ${s.labels['host'] ?? ''} ${method} x${s.value}`);
    }
  }
  return writes;
}
