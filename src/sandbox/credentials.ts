// Per-cluster secrets of the sandbox: the service-account signing key pair and the admin token.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ClusterCredentials {
  readonly saKeyFile: string;
  readonly saPubFile: string;
  readonly tokenFile: string;
  readonly adminToken: string;
  /** The static token of each further user, by name. */
  readonly tokens: Readonly<Record<string, string>>;
}

export interface StaticUser {
  readonly name: string;
  readonly groups?: readonly string[];
}

/** Writes the key pair that signs service-account tokens, a static admin bearer token, and one for each further user (a node's kubelet, say). */
export function writeCredentials(dir: string, users: readonly StaticUser[] = []): ClusterCredentials {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const saKeyFile = join(dir, 'sa.key');
  const saPubFile = join(dir, 'sa.pub');
  writeFileSync(saKeyFile, privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });
  writeFileSync(saPubFile, publicKey.export({ type: 'spki', format: 'pem' }));
  const adminToken = randomBytes(24).toString('hex');
  const tokenFile = join(dir, 'tokens.csv');
  const tokens = Object.fromEntries(users.map((u) => [u.name, randomBytes(24).toString('hex')]));
  // token,user,uid,"group1,group2": system:masters makes the admin a cluster superuser.
  const lines = [`${adminToken},admin,admin-uid,system:masters`, ...users.map((u, i) => `${tokens[u.name] ?? ''},${u.name},user-${i},"${(u.groups ?? []).join(',')}"`)];
  writeFileSync(tokenFile, `${lines.join('\n')}\n`, { mode: 0o600 });
  return { saKeyFile, saPubFile, tokenFile, adminToken, tokens };
}
