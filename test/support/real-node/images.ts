// The container images the real-node cluster runs, built here without any registry and cached by
// content under .cache/images (a docker-archive per image, named by a hash of what made it):
// - the base the Dockerfile names (node:24-bookworm-slim): a Debian bookworm rootfs by mmdebstrap
//   with the Node binary this package pins and npm, and the image's `node` user, 1000:1000;
// - a pause image for pod sandboxes, from a few lines of static C;
// - our image, from the repository's Dockerfile and build context exactly as they are;
// - the Go controller's image, from the binary tools/build.sh made (its static manager, run as a
//   non-root user, as its chart expects).
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, appendFileSync, chownSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PACKAGE_ROOT, toolPath } from '../../../src/sandbox/index.ts';
import { run } from '../exec.ts';

export const IMAGE_CACHE = join(PACKAGE_ROOT, '.cache', 'images');

/** The name our Dockerfile builds from; the locally made base is committed under it. */
export const BASE_IMAGE = 'docker.io/library/node:24-bookworm-slim';
export const PAUSE_IMAGE = 'localhost/pause:3.10';
export const CONTROLLER_REPOSITORY = 'localhost/cluster-registry';
export const UPSTREAM_REPOSITORY = 'localhost/cluster-registry-controller-go';
/** npm in the base image, as the official image carries one. */
const NPM_VERSION = '11.6.2';

export interface BuiltImage {
  /** Full reference, e.g. localhost/cluster-registry:3f2a…; the tag is the content hash. */
  readonly ref: string;
  readonly repository: string;
  readonly tag: string;
  /** docker-archive file, for `ctr images import`. */
  readonly archive: string;
}

export interface Images {
  readonly base: BuiltImage;
  readonly pause: BuiltImage;
  readonly controller: BuiltImage;
  readonly upstream: BuiltImage;
}

type Log = (message: string) => void;

const PAUSE_C = `#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void quit(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
  signal(SIGINT, quit);
  signal(SIGTERM, quit);
  signal(SIGCHLD, reap);
  for (;;) pause();
}
`;

function sha(parts: readonly (string | Buffer)[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 16);
}

/** The files the Dockerfile's build context holds, by .dockerignore (`*`, then `!path` and exclusion globs). */
export function buildContextFiles(root: string = PACKAGE_ROOT): string[] {
  const lines = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const include = lines.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
  const exclude = lines.filter((l) => !l.startsWith('!') && l !== '*').map(globToRegExp);
  const files: string[] = [];
  const walk = (path: string): void => {
    const full = join(root, path);
    if (!existsSync(full)) return;
    if (statSync(full).isDirectory()) {
      for (const e of readdirSync(full).sort()) walk(join(path, e));
    } else if (!exclude.some((re) => re.test(path))) {
      files.push(path);
    }
  };
  for (const i of include) walk(i);
  return ['Dockerfile', '.dockerignore', ...files];
}

// A .dockerignore pattern: a double star and slash spans directories, `*` and `?` stay within one name.
export function globToRegExp(glob: string): RegExp {
  let src = '';
  for (let i = 0; i < glob.length; i++) {
    if (glob.startsWith('**/', i)) {
      src += '(?:.*/)?';
      i += 2;
    } else if (glob[i] === '*') src += '[^/]*';
    else if (glob[i] === '?') src += '[^/]';
    else src += (glob[i] ?? '').replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${src}$`);
}

class Builder {
  private storage: string | undefined;
  private readonly log: Log;

  constructor(log: Log) {
    this.log = log;
  }

  /**
   * buildah with its own vfs storage, in a mount namespace whose /run and /var/lib are its own
   * tmpfs: the caches and network state it would leave in the host's go with it.
   */
  buildah(args: readonly string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<string> {
    this.storage ??= mkdtempSync(join(IMAGE_CACHE, 'buildah-'));
    const buildah = ['buildah', '--root', join(this.storage, 'root'), '--runroot', join(this.storage, 'run'), '--storage-driver', 'vfs', ...args];
    const script = 'mount -t tmpfs -o mode=755 build-run /run && mount -t tmpfs -o mode=755 build-var-lib /var/lib && exec "$@"';
    return run('unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'sh', ...buildah], { timeoutMs: 900_000, ...opts });
  }

  async cached(name: string, repository: string, key: string, build: (ref: string) => Promise<void>): Promise<BuiltImage> {
    const tag = key;
    const ref = `${repository}:${tag}`;
    const archive = join(IMAGE_CACHE, `${name}-${tag}.tar`);
    if (existsSync(archive)) return { ref, repository, tag, archive };
    const started = Date.now();
    this.log(`building image ${ref}`);
    await build(ref);
    const tmp = `${archive}.tmp`;
    rmSync(tmp, { force: true });
    await this.buildah(['push', ref, `docker-archive:${tmp}:${ref}`]);
    renameSync(tmp, archive);
    this.log(`built image ${ref} in ${Math.round((Date.now() - started) / 1000)} s`);
    return { ref, repository, tag, archive };
  }

  /** Loads a cached archive into this builder's storage (a later build names it in FROM). */
  async load(image: BuiltImage, as: string): Promise<void> {
    await this.buildah(['pull', '--quiet', `docker-archive:${image.archive}`]);
    await this.buildah(['tag', image.ref, as]);
  }

  dispose(): void {
    if (this.storage) rmSync(this.storage, { recursive: true, force: true });
    this.storage = undefined;
  }
}

async function buildBase(b: Builder, log: Log): Promise<BuiltImage> {
  const nodeBinary = join(PACKAGE_ROOT, 'node_modules', 'node', 'bin', 'node');
  const nodeVersion = (await run(nodeBinary, ['--version'])).trim();
  const sources = '/etc/apt/sources.list.d/debian.sources';
  const key = sha([buildBase.toString(), nodeVersion, NPM_VERSION, existsSync(sources) ? readFileSync(sources) : 'deb.debian.org']);
  return b.cached('base', BASE_IMAGE.replace(/:[^:]*$/, ''), key, async (ref) => {
    const work = mkdtempSync(join(IMAGE_CACHE, 'rootfs-'));
    try {
      const rootfs = join(work, 'rootfs');
      log(`debootstrapping bookworm (minbase) for ${BASE_IMAGE}`);
      // unshare mode: the build root gets its own mounts, so nothing of the host's (its /dev/shm, say) is ever bound into it.
      await run('mmdebstrap', ['--quiet', '--mode=unshare', '--variant=minbase', 'bookworm', rootfs, existsSync(sources) ? sources : 'http://deb.debian.org/debian'], { timeoutMs: 900_000 });
      rmSync(join(rootfs, 'var', 'cache', 'apt'), { recursive: true, force: true });
      rmSync(join(rootfs, 'var', 'lib', 'apt', 'lists'), { recursive: true, force: true });
      copyFileSync(nodeBinary, join(rootfs, 'usr', 'local', 'bin', 'node'));
      const npmTgz = (await run('npm', ['pack', '--silent', `npm@${NPM_VERSION}`], { cwd: work })).trim().split('\n').pop() ?? '';
      const npmDir = join(rootfs, 'usr', 'local', 'lib', 'node_modules', 'npm');
      mkdirSync(npmDir, { recursive: true });
      await run('tar', ['-xzf', join(work, npmTgz), '-C', npmDir, '--strip-components=1', '--no-same-owner']);
      symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr', 'local', 'bin', 'npm'));
      symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr', 'local', 'bin', 'npx'));
      // mmdebstrap copies the build machine's; a container runtime mounts its own over these.
      writeFileSync(join(rootfs, 'etc', 'hostname'), 'localhost\n');
      writeFileSync(join(rootfs, 'etc', 'resolv.conf'), '');
      appendFileSync(join(rootfs, 'etc', 'passwd'), 'node:x:1000:1000::/home/node:/bin/sh\n');
      appendFileSync(join(rootfs, 'etc', 'group'), 'node:x:1000:\n');
      mkdirSync(join(rootfs, 'home', 'node'));
      chownSync(join(rootfs, 'home', 'node'), 1000, 1000);
      const ctr = (await b.buildah(['from', 'scratch'])).trim();
      await b.buildah(['copy', '--quiet', ctr, `${rootfs}/`, '/']);
      await b.buildah(['config', '--env', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', '--env', `NODE_VERSION=${nodeVersion.slice(1)}`, '--cmd', 'node', ctr]);
      await b.buildah(['commit', '--quiet', '--rm', ctr, ref]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
}

async function buildPause(b: Builder): Promise<BuiltImage> {
  return b.cached('pause', PAUSE_IMAGE.replace(/:[^:]*$/, ''), sha([PAUSE_C]), async (ref) => {
    const work = mkdtempSync(join(IMAGE_CACHE, 'pause-'));
    try {
      writeFileSync(join(work, 'pause.c'), PAUSE_C);
      await run('gcc', ['-Os', '-static', '-o', join(work, 'pause'), join(work, 'pause.c')]);
      const ctr = (await b.buildah(['from', 'scratch'])).trim();
      await b.buildah(['copy', '--quiet', ctr, join(work, 'pause'), '/pause']);
      await b.buildah(['config', '--entrypoint', '["/pause"]', '--user', '65535:65535', ctr]);
      await b.buildah(['commit', '--quiet', '--rm', ctr, ref]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
}

/**
 * Our image from the Dockerfile as it is. npm inside the build reaches the registry through this
 * machine's TLS interception only with the machine's CA bundle: it is lent to the build's RUN steps
 * (a read-only mount and an npmrc naming it), so neither the Dockerfile nor the image changes.
 */
async function buildController(b: Builder, base: BuiltImage): Promise<BuiltImage> {
  const files = buildContextFiles();
  const key = sha([base.tag, ...files.flatMap((f) => [f, readFileSync(join(PACKAGE_ROOT, f))])]);
  return b.cached('controller', CONTROLLER_REPOSITORY, key, async (ref) => {
    await b.load(base, BASE_IMAGE);
    const work = mkdtempSync(join(IMAGE_CACHE, 'npmrc-'));
    try {
      const ca = '/etc/ssl/certs/ca-certificates.crt';
      const mounts: string[] = [];
      if (existsSync(ca)) {
        writeFileSync(join(work, 'npmrc'), `cafile=${ca}\n`);
        mounts.push('-v', `${ca}:${ca}:ro`, '-v', `${join(work, 'npmrc')}:/root/.npmrc:ro`);
      }
      await b.buildah(['bud', '--quiet', '--pull=never', '--isolation=chroot', '--layers=false', ...mounts, '-t', ref, '-f', 'Dockerfile', '.'], { cwd: PACKAGE_ROOT });
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
}

async function buildUpstream(b: Builder): Promise<BuiltImage> {
  const binary = toolPath('upstream-controller');
  return b.cached('upstream', UPSTREAM_REPOSITORY, sha([buildUpstream.toString(), readFileSync(binary)]), async (ref) => {
    const ctr = (await b.buildah(['from', 'scratch'])).trim();
    await b.buildah(['copy', '--quiet', ctr, binary, '/manager']);
    // A writable /tmp, as the distroless base of upstream's image has: its webhook server keeps
    // its serving certificate there.
    const work = mkdtempSync(join(IMAGE_CACHE, 'tmp-'));
    try {
      mkdirSync(join(work, 'tmp'), { mode: 0o1777 });
      chmodSync(join(work, 'tmp'), 0o1777);
      await run('tar', ['-C', work, '-cf', join(work, 'tmp.tar'), 'tmp']);
      await b.buildah(['add', '--quiet', ctr, join(work, 'tmp.tar'), '/']);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    await b.buildah(['config', '--entrypoint', '["/manager"]', '--user', '65532:65532', ctr]);
    await b.buildah(['commit', '--quiet', '--rm', ctr, ref]);
  });
}

/** Builds what is missing from the cache and returns every image; old archives of a name are removed. */
export async function buildImages(log: Log = () => undefined): Promise<Images> {
  mkdirSync(IMAGE_CACHE, { recursive: true });
  const b = new Builder(log);
  try {
    const base = await buildBase(b, log);
    const images: Images = { base, pause: await buildPause(b), controller: await buildController(b, base), upstream: await buildUpstream(b) };
    pruneCache(Object.entries(images).map(([name, img]) => relative(IMAGE_CACHE, img.archive) || name));
    return images;
  } finally {
    b.dispose();
  }
}

/** Keeps only the archives in use, so that each source change does not leave an image behind. */
function pruneCache(keep: readonly string[]): void {
  for (const entry of readdirSync(IMAGE_CACHE)) {
    if (!keep.includes(entry)) rmSync(join(IMAGE_CACHE, entry), { recursive: true, force: true });
  }
}
