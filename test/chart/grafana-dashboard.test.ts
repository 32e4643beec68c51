/**
 * The Grafana dashboard the chart ships: off by default; when on, a ConfigMap with Grafana's
 * sidecar label holding the dashboard JSON, whose every query names series the controller exports.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildController } from '../../controller/src/runtime/testing';
import { CHART_DIR, ensureHelm, runHelm } from './helm';
import { renderChart, valuesArgs } from './render';
import { validateAll } from './validate';

beforeAll(() => {
  ensureHelm();
});

const DASHBOARD = join(CHART_DIR, 'files', 'grafana-dashboard.json');
const on = ['grafana.dashboard.enabled=true'];

interface Dashboard {
  uid: string;
  panels: { title: string; targets: { expr: string }[] }[];
  templating: { list: { name: string; query?: string | { query: string } }[] };
}

describe('Grafana dashboard', () => {
  it('is not rendered by default', async () => {
    const objects = await renderChart();
    expect(objects.filter((o) => o.metadata.name.endsWith('grafana-dashboard'))).toEqual([]);
  });

  it('renders a valid ConfigMap with the grafana_dashboard label holding the dashboard JSON', async () => {
    const objects = await renderChart({ set: on });
    const cms = objects.filter(
      (o) => o.kind === 'ConfigMap' && o.metadata.name === 'optimus-grafana-dashboard',
    );
    expect(cms).toHaveLength(1);
    const cm = cms[0]!;
    expect(validateAll([cm])).toEqual([]);
    expect(cm.metadata.labels?.['grafana_dashboard']).toBe('1');
    expect(cm.metadata.namespace).toBe('optimus-system');
    const data = cm['data'] as Record<string, string>;
    expect(JSON.parse(data['optimus-jobs.json']!)).toEqual(JSON.parse(readFileSync(DASHBOARD, 'utf8')));
  });

  it('takes another namespace, labels and the folder annotation', async () => {
    const objects = await renderChart({
      set: [
        ...on,
        'grafana.dashboard.namespace=monitoring',
        'grafana.dashboard.annotations.grafana_folder=Optimus',
      ],
    });
    const cm = objects.find((o) => o.metadata.name === 'optimus-grafana-dashboard')!;
    expect(cm.metadata.namespace).toBe('monitoring');
    expect(cm.metadata.annotations).toEqual({ grafana_folder: 'Optimus' });
  });

  it('is refused by the values schema when mistyped', async () => {
    const r = await runHelm(['lint', CHART_DIR, ...valuesArgs({ set: ['grafana.dashboard.enable=true'] })]);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/enable/);
  });

  it('queries only series the controller exports', async () => {
    const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
    expect(dash.uid).toBe('optimus-jobs');
    const { controller } = buildController();
    const exported = new Set((await controller.metrics.registry.getMetricsAsJSON()).map((m) => m.name));
    const exprs = [
      ...dash.panels.flatMap((p) => p.targets.map((t) => t.expr)),
      ...dash.templating.list.flatMap((v) => (typeof v.query === 'object' ? [v.query.query] : [])),
    ];
    const used = new Set(exprs.flatMap((e) => e.match(/optimus_[a-z_]+/g) ?? []));
    expect(used.size).toBeGreaterThan(8);
    for (const name of used)
      expect({ name, exported: exported.has(name.replace(/_(bucket|sum|count)$/, '')) }).toEqual({
        name,
        exported: true,
      });
    // Per-job panels filter by the dashboard's variables, on the labels the controller sets.
    for (const e of exprs.filter((x) => /optimus_job_/.test(x)))
      expect(e).toMatch(/job_namespace=~"\$namespace"|label_values/);
  });
});
