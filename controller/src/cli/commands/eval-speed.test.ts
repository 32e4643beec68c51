import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('optimus eval speed', () => {
  it('prints exactly one JSON document with the contract fields', async () => {
    const { stdout } = await run(
      'npx',
      [
        'tsx',
        'controller/src/cli/main.ts',
        'eval',
        'speed',
        '--data',
        'test/data/measured-speeds.csv',
        '--samples',
        '10',
        '--seeds',
        '1',
        '--json',
      ],
      { cwd: new URL('../../../../', import.meta.url).pathname },
    );
    const doc = JSON.parse(stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({ samples: 10, seeds: 1 });
    expect(Object.keys(doc.models as object)).toContain('resnet-50');
    for (const key of ['medianError', 'p90Error']) {
      expect(typeof doc[key]).toBe('number');
      expect(typeof (doc.baseline as Record<string, unknown>)[key]).toBe('number');
    }
  });
});
