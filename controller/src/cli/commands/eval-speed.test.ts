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

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function optimus(args: readonly string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await run('npx', ['tsx', 'controller/src/cli/main.ts', ...args], {
      cwd: new URL('../../../../', import.meta.url).pathname,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const POLLUX_MODELS = ['bert', 'cifar10', 'deepspeech2', 'imagenet', 'ncf', 'yolov3'];

// Each case starts a real `optimus` process (tsx): generous time on a shared, loaded machine.
describe('optimus eval speed on all-reduce data (Pollux’s placements)', { timeout: 120_000 }, () => {
  it('--json prints exactly one JSON document: both models’ errors, per model and pooled', async () => {
    const r = await optimus([
      'eval',
      'speed',
      '--data',
      'test/data/pollux',
      '--samples',
      '20',
      '--seeds',
      '1',
      '--json',
    ]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({
      kind: 'allreduce',
      samples: 20,
      seeds: 1,
      baselineName: 'pollux-throughput',
    });
    const models = doc.models as Record<string, Record<string, unknown>>;
    expect(Object.keys(models)).toEqual(POLLUX_MODELS);
    const errors = (o: Record<string, unknown>): void => {
      for (const key of ['medianError', 'p90Error']) {
        expect(typeof o[key], key).toBe('number');
        expect(typeof (o.baseline as Record<string, unknown>)[key], `baseline.${key}`).toBe('number');
      }
    };
    errors(doc);
    errors(doc.beyond as Record<string, unknown>);
    for (const name of POLLUX_MODELS) {
      const m = models[name]!;
      errors(m);
      errors(m.beyond as Record<string, unknown>);
      for (const key of ['predictions', 'configurations', 'oursCloser'])
        expect(typeof m[key], `${name}.${key}`).toBe('number');
    }
    for (const key of ['predictions', 'oursCloser', 'intervalCoverage'])
      expect(typeof doc[key], key).toBe('number');
  });

  it('reads one placements.csv too, and prints a table without --json', async () => {
    const r = await optimus([
      'eval',
      'speed',
      '--data',
      'test/data/pollux/yolov3/placements.csv',
      '--samples',
      '10',
      '--seeds',
      '1',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^yolov3 +540 /m);
    expect(r.stdout).toMatch(/^ALL /m);
    expect(r.stdout).toContain('pollux med');
    expect(r.stdout).not.toMatch(/^bert /m);
  });

  it.each([
    {
      name: 'a flag of parameter-server data',
      args: ['--data', 'test/data/pollux', '--samples', '5', '--choose'],
      error: '--choose: parameter-server data only',
    },
    {
      name: 'a missing path',
      args: ['--data', 'test/data/no-such-dir', '--samples', '5'],
      error: 'cannot read test/data/no-such-dir',
    },
    {
      name: 'a bad --samples',
      args: ['--data', 'test/data/pollux', '--samples', '0'],
      error: '--samples must be an integer ≥ 1',
    },
  ])('exits 1 with the reason on stderr and nothing on stdout for $name', async ({ args, error }) => {
    const r = await optimus(['eval', 'speed', ...args]);
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toContain(error);
  });
});
