// Type-aware lint: the promise rules matter most in an async controller, where a floating
// promise is a lost error and a misused one is a handler that never awaits.
import path from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers of docs/architecture.md: what each folder of src/ may import besides itself. The Go
// ports import nothing of ours, the domain only them, the runtime only the API types and the
// label selectors its caches filter by, and the controllers side by side never each other.
const LOWER = ['go', 'core', 'kube', 'peers'];
const MAY_IMPORT = {
  go: [],
  core: ['go'],
  kube: ['core/api', 'go/labels'],
  sandbox: [],
  peers: ['go', 'core', 'kube'],
  registry: LOWER,
  sync: LOWER,
  hub: LOWER,
  ops: [...LOWER, 'registry', 'sync', 'hub'],
  manager: [...LOWER, 'registry', 'sync', 'hub'],
  testbed: [...LOWER, 'registry', 'sync', 'hub', 'ops', 'manager', 'sandbox'],
  cli: [...LOWER, 'registry', 'sync', 'hub', 'ops', 'manager', 'sandbox', 'testbed'],
};
const SRC = path.join(import.meta.dirname, 'src');

const layering = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      upward: 'src/{{from}} may not import src/{{to}}: imports point down the layers (docs/architecture.md)',
      unknown: 'src/{{from}} is in no layer: give it one in eslint.config.js (MAY_IMPORT)',
      test: 'product code may not import test code ({{to}})',
      dynamic: 'an import whose path is not a literal cannot be checked against the layers',
    },
  },
  create(context) {
    const file = path.relative(SRC, context.filename);
    if (file.startsWith('..')) return {};
    const from = file.split(path.sep)[0];
    const allowed = MAY_IMPORT[from];
    const isTest = /\.test\.ts$/.test(file);
    const check = (node, spec) => {
      if (typeof spec !== 'string') return context.report({ node, messageId: 'dynamic' });
      if (!spec.startsWith('.')) return;
      const target = path.resolve(path.dirname(context.filename), spec);
      const to = path.relative(SRC, target).split(path.sep).join('/');
      if (to.startsWith('..')) {
        // Unit tests may use test support; the product never does.
        if (!isTest) context.report({ node, messageId: 'test', data: { to: path.relative(import.meta.dirname, target) } });
        return;
      }
      if (to.split('/')[0] === from || (allowed ?? []).some((a) => to === a || to.startsWith(`${a}/`))) return;
      context.report({ node, messageId: 'upward', data: { from, to } });
    };
    const literal = (node) => (node?.type === 'Literal' ? node.value : node?.type === 'TemplateLiteral' && node.expressions.length === 0 ? node.quasis[0].value.cooked : undefined);
    return {
      Program: (node) => {
        if (!allowed && file.includes(path.sep)) context.report({ node, messageId: 'unknown', data: { from } });
      },
      ImportDeclaration: (node) => check(node.source, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node.source, node.source.value),
      ExportAllDeclaration: (node) => check(node.source, node.source.value),
      ImportExpression: (node) => check(node.source, literal(node.source)),
      TSImportType: (node) => check(node, literal(node.argument?.literal ?? node.argument)),
      TSExternalModuleReference: (node) => check(node, literal(node.expression)),
    };
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.cache/**', 'bin/**', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { local: { rules: { layering } } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's describe/it return promises the runner itself tracks.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
      'local/layering': 'error',
    },
  },
  {
    // Tests and benchmarks drive untyped JSON from the apiserver; strict any-tracking there is noise.
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
