import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnNode } from './processes';

const openFds = (): number => readdirSync('/proc/self/fd').length;

describe('spawnNode', () => {
  it('sends stderr to the file and keeps no descriptor of it open in the parent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'optimus-processes-'));
    const script = join(dir, 'child.mjs');
    writeFileSync(script, "process.stderr.write('hello\\n');\n");
    const stderrFile = join(dir, 'stderr.log');
    const before = openFds();
    for (let i = 0; i < 5; i += 1) await spawnNode({ script, env: {}, stderrFile }).exited;
    expect(openFds()).toBe(before);
    expect(readFileSync(stderrFile, 'utf8')).toBe('hello\n'.repeat(5));
  });
});
