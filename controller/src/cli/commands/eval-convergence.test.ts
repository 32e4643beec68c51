/** `eval convergence --json` through the real command definition (in-process). */
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerEvalCommands } from './eval';

async function cli(args: string[]): Promise<string> {
  const program = new Command('optimus').exitOverride();
  registerEvalCommands(program);
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  await program.parseAsync(args, { from: 'user' });
  return out;
}

afterEach(() => vi.restoreAllMocks());

type Paired = { oursCloser: number; ties: number; paperCloser: number; p: number; verdict: string };

describe('optimus eval convergence --json', () => {
  it('judges the goal against the paper both on medians and fit by fit, from the same fits', async () => {
    const doc = JSON.parse(await cli(['eval', 'convergence', '--replicates', '6', '--json'])) as {
      families: Record<string, Record<string, { fits: number; paired: Paired }>>;
      versusPaper: Record<string, Record<string, boolean>>;
      versusPaperPaired: Record<string, Record<string, boolean>>;
    };
    expect(Object.keys(doc.versusPaperPaired).sort()).toEqual(Object.keys(doc.versusPaper).sort());
    for (const [family, levels] of Object.entries(doc.versusPaperPaired)) {
      expect(Object.keys(levels)).toEqual(['0.25', '0.5', '0.75']);
      for (const [p, met] of Object.entries(levels)) {
        const paired = doc.families[family]?.[p]?.paired;
        expect(paired).toBeDefined();
        expect(paired!.oursCloser + paired!.ties + paired!.paperCloser).toBe(doc.families[family]?.[p]?.fits);
        // 1/k must not be worse; the other families must be better.
        expect(met).toBe(family === 'inverse' ? paired!.verdict !== 'worse' : paired!.verdict === 'better');
      }
    }
  });
});
