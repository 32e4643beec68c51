/**
 * The architecture rules (eslint.architecture.mjs) are part of `npm run lint`; this test shows they
 * refuse what they must, so a rule that silently matches nothing fails here.
 */
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { architectureRules } from '../../eslint.architecture.mjs';

const eslint = new ESLint({
  cwd: new URL('../..', import.meta.url).pathname,
  overrideConfigFile: true,
  overrideConfig: [
    { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
    ...architectureRules,
  ],
});

async function messages(filePath: string, code: string): Promise<string[]> {
  const [r] = await eslint.lintText(code, { filePath });
  return (r?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('architecture lint rules', () => {
  it.each([
    [
      'controller/src/models/speed/bad.ts',
      "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;",
      'architecture/allowed-imports',
    ],
    [
      'controller/src/scheduling/bad.ts',
      "import { Controller } from '../runtime/controller';\nexport const x = Controller;",
      'architecture/allowed-imports',
    ],
    [
      'controller/src/planning/bad.ts',
      "import { pino } from 'pino';\nexport const x = pino;",
      'architecture/allowed-imports',
    ],
    // What the denylist let through (issue 27): config, dashboard, broker access, a dynamic node import.
    [
      'controller/src/scheduling/bad.ts',
      "import { readEnv } from '../config/env';\nexport const x = readEnv;",
      'architecture/allowed-imports',
    ],
    [
      'controller/src/models/bad.ts',
      "import { x } from '../dashboard/format';\nexport const y = x;",
      'architecture/allowed-imports',
    ],
    [
      'controller/src/planning/bad.ts',
      "import { x } from '../broker-access/identities';\nexport const y = x;",
      'architecture/allowed-imports',
    ],
    [
      'controller/src/models/bad.ts',
      "export const f = async () => (await import('node:fs')).readFileSync;",
      'architecture/allowed-imports',
    ],
    [
      'controller/src/models/bad.ts',
      "import { randomUUID } from 'node:crypto';\nexport const x = randomUUID;",
      'architecture/allowed-imports',
    ],
    ['controller/src/scheduling/bad.ts', 'export const t = () => Date.now();', 'no-restricted-properties'],
    [
      'controller/src/scheduling/bad.ts',
      "export const t = () => process.env['X'];",
      'no-restricted-properties',
    ],
    ['controller/src/models/bad.ts', 'export const r = () => Math.random();', 'no-restricted-properties'],
    ['controller/src/models/bad.ts', 'export const t = () => new Date();', 'no-restricted-syntax'],
    // The runtime is the same for every backend.
    [
      'controller/src/runtime/bad.ts',
      "import { LocalBackend } from '../local/backend';\nexport const x = LocalBackend;",
      'architecture/allowed-imports',
    ],
    [
      'controller/src/runtime/bad.ts',
      "import { x } from '../k8s/api/names';\nexport const y = x;",
      'architecture/allowed-imports',
    ],
    [
      'shared/src/bad.ts',
      "import { x } from '../../controller/src/runtime/controller';\nexport const y = x;",
      'architecture/allowed-imports',
    ],
    [
      'sidecar/src/bad.ts',
      "import { x } from '../../controller/src/models/random';\nexport const y = x;",
      'architecture/allowed-imports',
    ],
  ])('refuses %s', async (file, code, rule) => {
    expect((await messages(file, code)).join('\n')).toContain(rule);
  });

  it('lets an adapter do I/O and the core import its own modules', async () => {
    expect(
      await messages(
        'controller/src/runtime/ok.ts',
        "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;",
      ),
    ).toEqual([]);
    expect(
      await messages(
        'controller/src/scheduling/ok.ts',
        "import { seededRandom } from '../models/random';\nimport { z } from 'zod';\nexport const x = [seededRandom, z];",
      ),
    ).toEqual([]);
    expect(
      await messages(
        'controller/src/runtime/ok.ts',
        "import { planChanges } from '../planning/plan';\nimport { x } from '../../../shared/src/units';\nexport const y = [planChanges, x];",
      ),
    ).toEqual([]);
  });
});
