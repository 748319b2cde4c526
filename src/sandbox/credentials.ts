// Per-cluster secrets of the sandbox: the service-account signing key pair and the admin token.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ClusterCredentials {
  readonly saKeyFile: string;
  readonly saPubFile: string;
  readonly tokenFile: string;
  readonly adminToken: string;
}

/** Writes the key pair that signs service-account tokens and a static admin bearer token. */
export function writeCredentials(dir: string): ClusterCredentials {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const saKeyFile = join(dir, 'sa.key');
  const saPubFile = join(dir, 'sa.pub');
  writeFileSync(saKeyFile, privateKey.export({ type: 'pkcs1', format: 'pem' }), { mode: 0o600 });
  writeFileSync(saPubFile, publicKey.export({ type: 'spki', format: 'pem' }));
  const adminToken = randomBytes(24).toString('hex');
  const tokenFile = join(dir, 'tokens.csv');
  // token,user,uid,"group1,group2": system:masters makes the admin a cluster superuser.
  writeFileSync(tokenFile, `${adminToken},admin,admin-uid,system:masters\n`, { mode: 0o600 });
  return { saKeyFile, saPubFile, tokenFile, adminToken };
}
