/**
 * Configuration that cannot crash-loop: the chart, rendered with the default values and with every
 * `ci/*.yaml`, gives the controller arguments and an environment that the controller's own parser
 * accepts — `optimus kubernetes run --check-config`, run from the image's bundle exactly as the
 * container runs it (`node /app/optimus.mjs <args>`). And the documented settings are the parser's.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CONTROLLER_BUNDLE, buildController } from '../../controller/build.mjs';
import { SETTINGS } from '../../controller/src/config/env';
import { REPO_ROOT, ensureHelm } from './helm';
import { ciValuesFiles, findObject, renderChart, type RenderOptions } from './render';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { name: string; key: string } };
}
interface Container {
  name: string;
  args?: string[];
  env?: EnvVar[];
}

/** What the kubelet would put in the environment: downward API and Secret values as stand-ins. */
const envOf = (c: Container): Record<string, string> =>
  Object.fromEntries(
    (c.env ?? []).map((e) => [
      e.name,
      e.value ??
        (e.valueFrom?.fieldRef
          ? `pod-${e.valueFrom.fieldRef.fieldPath.replace(/\W/g, '-')}`
          : 'secret-value'),
    ]),
  );

async function renderedController(
  opts: RenderOptions,
): Promise<{ args: string[]; env: Record<string, string> }> {
  const deploy = findObject(await renderChart(opts), 'Deployment', '-controller');
  const c = (
    deploy['spec'] as { template: { spec: { containers: Container[] } } }
  ).template.spec.containers.find((x) => x.name === 'controller')!;
  return { args: c.args ?? [], env: envOf(c) };
}

const checkConfig = (args: readonly string[], env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [CONTROLLER_BUNDLE, ...args, '--check-config', '--json'],
      { env: { PATH: process.env['PATH'] ?? '', ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ),
  );

beforeAll(async () => {
  ensureHelm();
  await buildController();
}, 120_000);

describe('the chart gives the controller a configuration it accepts', () => {
  it.each(['(defaults)', ...ciValuesFiles()])('%s', async (file) => {
    const { args, env } = await renderedController(file === '(defaults)' ? {} : { valuesFiles: [file] });
    expect(args[0]).toBe('kubernetes');
    const r = await checkConfig(args, env);
    expect(r.code, r.stderr).toBe(0);
    const cfg = (JSON.parse(r.stdout) as { config: { policy: string; brokerUrl: string } }).config;
    expect(cfg.policy).toBe('optimus');
    expect(cfg.brokerUrl).toMatch(/^mqtts?:\/\//);
  });

  it('a flag from extraArgs wins over the environment the chart sets', async () => {
    const { args, env } = await renderedController({
      set: ['extraArgs={--policy=drf}', 'config.policy=tetris'],
    });
    expect(env['OPTIMUS_POLICY']).toBe('tetris');
    const r = await checkConfig(args, env);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { config: { policy: string } }).config.policy).toBe('drf');
  });

  it('names the bad setting instead of crash-looping silently', async () => {
    const bad = await renderedController({ set: ['extraArgs={--policy=bogus}'] });
    const r = await checkConfig(bad.args, bad.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/OPTIMUS_POLICY \(--policy\): unknown policy "bogus"/);
    const port = await checkConfig(['kubernetes', '--http-port=eighty'], {
      OPTIMUS_BROKER_URL: 'mqtt://b:1883',
    });
    expect(port.code).toBe(1);
    expect(port.stderr).toContain('--http-port (OPTIMUS_HTTP_PORT)');
  });
});

describe('docs/controller-config.md', () => {
  it('documents exactly the settings the parser knows, with their flags', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'controller-config.md'), 'utf8');
    const rows = [...doc.matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|\s*`(--[a-z-]+)`\s*\|/gm)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(Object.fromEntries(rows)).toEqual(
      Object.fromEntries(Object.entries(SETTINGS).map(([v, [f]]) => [v, f])),
    );
  });
});
