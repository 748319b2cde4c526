// The version line, in upstream's format.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

export function versionLine(): string {
  return `cluster-registry version ${pkg.version} (${process.env['CLUSTER_REGISTRY_COMMIT'] ?? 'unknown'}) built on ${process.env['CLUSTER_REGISTRY_BUILD_DATE'] ?? 'unknown'}`;
}
