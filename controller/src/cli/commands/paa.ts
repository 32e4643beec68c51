/**
 * `optimus paa --blocks <file> --ps <p>`: PS load balancing (paper §5.3). Assigns a model's
 * parameter blocks to p parameter servers with PAA and with MXNet's default, and reports the
 * per-PS assigned size and request count of each.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { z } from 'zod';
import {
  assignParameters,
  defaultMxnetAssignment,
  summarizeAssignment,
  type AssignmentSummary,
  type ParameterBlock,
} from '../../scheduling/paa/index';
import { intFlag, printJson } from '../output';

const RESNET50 = fileURLToPath(new URL('../../scheduling/paa/resnet50-blocks.json', import.meta.url));

const BlocksFile = z.array(z.object({ name: z.string().min(1), size: z.number().int().positive() })).min(1);

interface PaaFlags {
  readonly blocks?: string;
  readonly ps: number;
  readonly seed: number;
  readonly json?: boolean;
}

/** Reads and validates a blocks file; errors name the flag and the bad entry. */
export function readBlocks(path: string): ParameterBlock[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`--blocks ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = BlocksFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `--blocks ${path}: expected a JSON array of {"name", "size"} (size a positive integer); ` +
        `at ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

function line(name: string, s: AssignmentSummary): string {
  const m = (n: number) => `${(n / 1e6).toFixed(3)}M`;
  return (
    `${name.padEnd(14)} size max ${m(s.maxSize)} min ${m(s.minSize)} (spread ${m(s.maxSize - s.minSize)})  ` +
    `requests max ${s.maxRequests} min ${s.minRequests} (spread ${s.maxRequests - s.minRequests})`
  );
}

export function registerPaaCommands(program: Command): void {
  program
    .command('paa')
    .description(
      'assign parameter blocks to parameter servers with PAA and with MXNet default; compare the load',
    )
    .option('--blocks <file>', 'JSON array of {"name","size"} (default: ResNet-50, 157 blocks)')
    .requiredOption('--ps <p>', 'number of parameter servers', intFlag('ps'))
    .option('--seed <n>', 'seed of MXNet default random choice for small blocks', intFlag('seed', 0), 1)
    .option('--json', 'print one JSON document on stdout')
    .action((flags: PaaFlags) => {
      const blocks = readBlocks(flags.blocks ?? RESNET50);
      const paa = summarizeAssignment(assignParameters(blocks, flags.ps));
      const mxnetDefault = summarizeAssignment(defaultMxnetAssignment(blocks, flags.ps, flags.seed));
      const totalSize = blocks.reduce((s, b) => s + b.size, 0);
      if (flags.json === true) {
        printJson({ blocks: blocks.length, totalSize, ps: flags.ps, seed: flags.seed, paa, mxnetDefault });
        return;
      }
      process.stdout.write(
        [
          `${blocks.length} blocks, ${totalSize} parameters, ${flags.ps} PS`,
          line('PAA', paa),
          line('MXNet default', mxnetDefault),
        ].join('\n') + '\n',
      );
    });
}
