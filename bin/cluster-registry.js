#!/usr/bin/env node
// Entry shim: the CLI is compiled to dist/ by `npm run build` (make builds it when needed).
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `cluster-registry needs Node >= 22.18 (this is ${process.version}); run it as \`npx cluster-registry\`, which uses the project's pinned Node 24\n`,
  );
  process.exit(1);
}
await import('../dist/cli/main.js');
