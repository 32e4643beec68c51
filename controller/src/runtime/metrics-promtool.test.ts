/**
 * `/metrics` as Prometheus' own linter sees it (`promtool check metrics`: names, types, units,
 * `_total` on counters, help text), with jobs in every state the runtime has — running, resizing
 * (a rollout in flight), waiting for a pre-run — so the per-job series and the histograms are all
 * present. promtool comes from Debian's `prometheus` package; without it, this test is skipped and
 * the name checks below still run.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { buildController, testJobSpec } from './testing';

const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find(
  (p) => spawnSync(p, ['--version']).status === 0,
);

async function metricsText(): Promise<{ text: string; stop: () => Promise<void> }> {
  let wall = 1000;
  const { controller: c, backend } = buildController({ now: () => wall });
  await c.start();
  for (const name of ['a', 'b', 'c']) await c.submit(testJobSpec(name));
  backend.hang.add('default/c');
  wall += 500;
  await c.roundNow('pre-run');
  return {
    text: await c.metrics.registry.metrics(),
    stop: async () => {
      backend.release();
      await c.stop();
    },
  };
}

describe('/metrics against the Prometheus conventions', () => {
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const stop of stops) await stop();
  });

  it('names every counter *_total and gives every series a type and help', async () => {
    const m = await metricsText();
    stops.push(m.stop);
    const types = [...m.text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name, type }));
    expect(types.length).toBeGreaterThan(15);
    for (const t of types.filter((x) => x.type === 'counter')) expect(t.name).toMatch(/_total$/);
    for (const t of types) expect(m.text).toContain(`# HELP ${t.name} `);
    expect(m.text).toMatch(/^optimus_job_phase\{[^}]*phase="resizing"\} 1$/m);
  });

  it.skipIf(PROMTOOL === undefined)('passes promtool check metrics without a warning', async () => {
    const { text, stop } = await metricsText();
    stops.push(stop);
    const r = spawnSync(PROMTOOL!, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect({ status: r.status, out: `${r.stdout}${r.stderr}`.trim() }).toEqual({ status: 0, out: '' });
  });
});
