// What an image archive (docker-archive, as buildah writes it) holds: its config and the paths its
// layers carry, read from the tar without unpacking or mounting anything.
import { run } from '../exec.ts';

export interface ImageConfig {
  readonly User?: string;
  readonly Entrypoint?: string[];
  readonly Cmd?: string[];
  readonly Env?: string[];
}

interface Manifest {
  readonly Config: string;
  readonly Layers: string[];
}

async function manifest(archive: string): Promise<Manifest> {
  const [m] = JSON.parse(await run('tar', ['-xOf', archive, 'manifest.json'])) as Manifest[];
  if (!m) throw new Error(`${archive} has no image`);
  return m;
}

export async function imageConfig(archive: string): Promise<ImageConfig> {
  const m = await manifest(archive);
  return (JSON.parse(await run('tar', ['-xOf', archive, m.Config])) as { config: ImageConfig }).config;
}

/** Every path in the image's layers, without the leading `./`. */
export async function imagePaths(archive: string): Promise<Set<string>> {
  const m = await manifest(archive);
  const paths = new Set<string>();
  for (const layer of m.Layers) {
    const listing = await run('sh', ['-c', 'tar -xOf "$1" "$2" | tar -t', 'list', archive, layer]);
    for (const p of listing.split('\n')) if (p) paths.add(p.replace(/^\.\//, '').replace(/\/$/, ''));
  }
  return paths;
}
