// The architecture as lint rules (STYLE.md "Dependencies point inward"): the pure core (models,
// scheduling, planning) imports no I/O module and no backend and never reads the clock; `shared/`
// imports neither side; the sidecar never imports the controller. A violation fails `npm test`.

/** Node's I/O modules and the I/O libraries. */
const IO_MODULES = [
  'fs',
  'fs/promises',
  'child_process',
  'net',
  'http',
  'https',
  'http2',
  'dgram',
  'dns',
  'tls',
  'worker_threads',
  'cluster',
  'readline',
  'os',
  'process',
].flatMap((m) => [m, `node:${m}`]);
const IO_LIBRARIES = [
  'mqtt',
  'mqtt-packet',
  'aedes',
  '@kubernetes/client-node',
  'hono',
  '@hono/*',
  'pino',
  'prom-client',
  'commander',
];

const coreImports = {
  paths: IO_MODULES.map((name) => ({ name, message: 'the pure core does no I/O: take it as a parameter' })),
  patterns: [
    { group: IO_LIBRARIES, message: 'the pure core does no I/O: an adapter does' },
    {
      group: [
        '**/runtime',
        '**/runtime/**',
        '**/local/**',
        '**/k8s/**',
        '**/sim/**',
        '**/http/**',
        '**/cli/**',
      ],
      message: 'the pure core depends on no backend or edge: dependencies point inward',
    },
  ],
};

const clockReads = [
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
];

export const architectureRules = [
  {
    files: [
      'controller/src/models/**/*.ts',
      'controller/src/scheduling/**/*.ts',
      'controller/src/planning/**/*.ts',
    ],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', coreImports],
      'no-restricted-properties': ['error', ...clockReads],
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
    files: ['shared/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/controller/**', '**/sidecar/**'],
              message: 'shared/ holds the wire contracts: it imports neither side',
            },
          ],
        },
      ],
    },
  },
  {
    // The shipped sidecar only: its end-to-end bench and test helpers drive the controller's intake.
    files: ['sidecar/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/controller/**'],
              message: 'the sidecar never imports the controller: share through shared/',
            },
          ],
        },
      ],
    },
  },
];
