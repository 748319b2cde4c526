#!/usr/bin/env node
// Entry shim: the CLI is compiled to dist/ by `npm run build` (make builds it when needed).
import '../dist/cli/main.js';
