// The architecture as lint rules (STYLE.md "Dependencies point inward"), written as allow-lists:
// each room names the rooms and packages it may import, so a new edge (a config reader, a
// dashboard helper, `await import('node:fs')`) fails `npm test` until someone allows it here on
// purpose. The pure core (models, scheduling, planning) imports only itself, `shared/` and pure
// computation packages, and never reads the environment, randomness or the clock; the runtime
// imports no backend; `shared/` imports neither side; the sidecar never imports the controller.
import path from 'node:path';

const ROOT = import.meta.dirname;

/** Rooms, as repository-relative folders. */
const CORE = ['controller/src/models', 'controller/src/scheduling', 'controller/src/planning'];
const SHARED = ['shared/src'];
const RUNTIME = ['controller/src/runtime'];

/** Packages that compute and do no I/O: the only ones the pure core may import. */
const PURE_PACKAGES = [
  'ml-fcnnls',
  'ml-matrix',
  'ml-regression',
  'ml-regression-*',
  'simple-statistics',
  'zod',
  '@js-sdsl/ordered-map',
];

const inside = (file, rooms) => rooms.some((r) => file === r || file.startsWith(`${r}/`));
const matchesPackage = (name, allowed) =>
  allowed.some((p) =>
    p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : name === p || name.startsWith(`${p}/`),
  );

/**
 * `architecture/allowed-imports`: every relative import must resolve inside one of `rooms`;
 * every package import must be one of `packages` (omitted: any package). Node's built-ins are
 * packages here (`node:fs`, `fs`).
 */
const allowedImports = {
  meta: {
    type: 'problem',
    schema: [
      {
        type: 'object',
        properties: {
          rooms: { type: 'array', items: { type: 'string' } },
          packages: { type: 'array', items: { type: 'string' } },
          why: { type: 'string' },
        },
        required: ['rooms', 'why'],
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const { rooms, packages, why } = context.options[0];
    const file = path.relative(ROOT, context.filename);
    const check = (node, source) => {
      if (typeof source !== 'string') return;
      if (source.startsWith('.')) {
        const target = path.relative(ROOT, path.resolve(path.dirname(context.filename), source));
        if (!inside(target, rooms))
          context.report({ node, message: `${file} may not import ${target}: ${why}` });
      } else if (packages && !matchesPackage(source.replace(/^node:/, 'node:'), packages)) {
        context.report({ node, message: `${file} may not import the package '${source}': ${why}` });
      }
    };
    const fromSource = (node) => {
      if (node.source) check(node, node.source.value);
    };
    return {
      ImportDeclaration: fromSource,
      ExportNamedDeclaration: fromSource,
      ExportAllDeclaration: fromSource,
      ImportExpression: (node) => {
        if (node.source.type === 'Literal') check(node, node.source.value);
        else context.report({ node, message: `${file}: an import by a computed name cannot be checked` });
      },
    };
  },
};

const plugin = { rules: { 'allowed-imports': allowedImports } };

const noEnvNoRandomNoClock = [
  {
    object: 'Date',
    property: 'now',
    message: 'the pure core never reads the clock: time comes in as a value',
  },
  {
    object: 'performance',
    property: 'now',
    message: 'the pure core never reads the clock: take `now` as a parameter',
  },
  { object: 'process', property: 'hrtime', message: 'the pure core never reads the clock' },
  {
    object: 'process',
    property: 'env',
    message: 'the pure core reads no environment: configuration comes in as a value',
  },
  {
    object: 'process',
    property: 'argv',
    message: 'the pure core reads no command line: configuration comes in as a value',
  },
  {
    object: 'Math',
    property: 'random',
    message: 'the pure core is deterministic: take a seeded generator (models/random.ts)',
  },
  {
    object: 'crypto',
    property: 'randomUUID',
    message: 'the pure core is deterministic: ids come in as values',
  },
  { object: 'crypto', property: 'getRandomValues', message: 'the pure core is deterministic' },
];

export const architectureRules = [
  {
    files: CORE.map((r) => `${r}/**/*.ts`),
    ignores: ['**/*.test.ts'],
    plugins: { architecture: plugin },
    rules: {
      'architecture/allowed-imports': [
        'error',
        {
          rooms: [...CORE, ...SHARED],
          packages: PURE_PACKAGES,
          why: 'the pure core imports only itself, shared/ and pure computation packages (dependencies point inward)',
        },
      ],
      'no-restricted-properties': ['error', ...noEnvNoRandomNoClock],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'the pure core does no I/O and reads no environment' },
        { name: 'setTimeout', message: 'the pure core never schedules: time comes in as a value' },
        { name: 'setInterval', message: 'the pure core never schedules' },
        { name: 'fetch', message: 'the pure core does no I/O' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'the pure core never reads the clock',
        },
      ],
    },
  },
  {
    files: RUNTIME.map((r) => `${r}/**/*.ts`),
    ignores: ['**/*.test.ts', 'controller/src/runtime/testing.ts'],
    plugins: { architecture: plugin },
    rules: {
      'architecture/allowed-imports': [
        'error',
        {
          rooms: [...RUNTIME, ...CORE, ...SHARED],
          why: 'the runtime is the same for every backend: it imports none of them (a backend implements runtime/backend.ts)',
        },
      ],
    },
  },
  {
    files: ['shared/**/*.ts'],
    ignores: ['**/*.test.ts'],
    plugins: { architecture: plugin },
    rules: {
      'architecture/allowed-imports': [
        'error',
        {
          rooms: SHARED,
          packages: ['zod'],
          why: 'shared/ holds the wire contracts: it imports neither side and does no I/O',
        },
      ],
    },
  },
  {
    // The shipped sidecar only: its end-to-end bench and test helpers drive the controller's intake.
    files: ['sidecar/src/**/*.ts'],
    plugins: { architecture: plugin },
    rules: {
      'architecture/allowed-imports': [
        'error',
        {
          rooms: ['sidecar/src', ...SHARED],
          why: 'the sidecar never imports the controller: share through shared/',
        },
      ],
    },
  },
];
