/**
 * `npm run bench:sidecar -- --json` is a contract others run: one JSON document on stdout with the
 * figures the issue names. A short run checks the shape, never the values (no timed assertions).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { stageBundle } from '../build.mjs';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

describe('bench:sidecar --json', () => {
  it('prints one JSON document with the contract fields, every record delivered', async () => {
    const { stdout } = await run(
      path.join(root, 'node_modules/.bin/tsx'),
      ['sidecar/bench/bench.ts', '--json', '--duration', '3', '--lines', '20000', '--idle', '2'],
      { cwd: root, timeout: 60_000 },
    );
    const doc = JSON.parse(stdout) as Record<string, unknown>;
    for (const k of [
      'linesPerSec',
      'rssBytes',
      'bareNodeRssBytes',
      'cpuFraction',
      'latencyP99Ms',
      'floorCpuFraction',
      'idleCpuFraction',
      'rssAnonBytes',
      'rssFileBytes',
      'bareNodeRssAnonBytes',
      'bareNodeRssFileBytes',
    ])
      expect(Number.isFinite(doc[k]), k).toBe(true);
    // null only when the floor measured 0 clock ticks (a run of a few seconds).
    expect(doc['cpuRatioToFloor'] === null || Number.isFinite(doc['cpuRatioToFloor'])).toBe(true);
    expect(doc['recordsReceived']).toBe(doc['linesWritten']);
    expect(doc['linesWritten']).toBeGreaterThan(0);
  }, 90_000);

  it('--stage transport runs the template-record build: every record delivered, the stage named', async () => {
    const { stdout } = await run(
      path.join(root, 'node_modules/.bin/tsx'),
      [
        'sidecar/bench/bench.ts',
        '--json',
        '--duration',
        '3',
        '--lines',
        '1000',
        '--idle',
        '1',
        '--stage',
        'transport',
      ],
      { cwd: root, timeout: 60_000 },
    );
    const doc = JSON.parse(stdout) as Record<string, unknown>;
    expect(doc['stage']).toBe('transport');
    expect(Number.isFinite(doc['cpuFraction'])).toBe(true);
    expect(doc['linesWritten']).toBeGreaterThan(0);
    expect(doc['recordsReceived']).toBe(doc['linesWritten']);
    // The stage build carries the template record; the shipped bundle must not.
    expect(fs.readFileSync(stageBundle('transport'), 'utf8')).toContain('"samplesPerSec":1024.35');
    expect(fs.readFileSync(stageBundle('full'), 'utf8')).not.toContain('1024.35');
  }, 90_000);

  it('refuses an unknown --stage with exit code 2 and the usage', async () => {
    const err = await run(
      path.join(root, 'node_modules/.bin/tsx'),
      ['sidecar/bench/bench.ts', '--stage', 'fast'],
      {
        cwd: root,
        timeout: 30_000,
      },
    ).then(
      () => null,
      (e: unknown) => e as { code?: number; stderr?: string },
    );
    expect(err?.code).toBe(2);
    expect(err?.stderr).toMatch(/--stage must be one of full, transport, transport-no-outbox/);
  }, 60_000);
});
