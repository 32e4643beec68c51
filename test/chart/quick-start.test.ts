/**
 * The quick starts are promises: the commands of the top README's "Running on Kubernetes" and of the
 * chart README's quick start, read from the documents themselves, name files that exist, render the
 * chart with the values they set, create a namespace before using it, and create the ConfigMap the
 * example mounts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR, REPO_ROOT, ensureHelm, runHelm } from './helm';

/** The shell lines of the ```sh blocks of `file` after `heading` (continuations joined, comments dropped). */
function commandsOf(file: string, heading: string): string[] {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  const start = text.indexOf(heading);
  expect(start, `${file} has "${heading}"`).toBeGreaterThanOrEqual(0);
  const end = text.indexOf('\n## ', start + heading.length);
  const section = text.slice(start, end < 0 ? undefined : end);
  const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  return blocks
    .join('\n')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'))
    .flatMap((l) => l.split(' && '));
}

const DOCS = [
  ['README.md', '## Running on Kubernetes'],
  ['charts/optimus/README.md', '## Quick start'],
] as const;

beforeAll(() => ensureHelm());

describe.each(DOCS)('quick start of %s', (file, heading) => {
  const commands = commandsOf(file, heading).map((c) => c.replaceAll('$REGISTRY', 'registry.example.com/ml'));

  it('builds the images from Dockerfiles that exist, from the repository root', () => {
    const builds = commands.filter((c) => c.startsWith('docker build'));
    expect(builds).toHaveLength(2);
    for (const b of builds) {
      const f = /-f (\S+)/.exec(b)?.[1] ?? '';
      expect(existsSync(join(REPO_ROOT, f)), f).toBe(true);
      expect(b.endsWith(' .')).toBe(true);
    }
  });

  it('installs with values the chart accepts, pointing both images at the registry', async () => {
    const install = commands.find((c) => c.startsWith('helm install'))!;
    const sets = [...install.matchAll(/--set (\S+)/g)].map((m) => m[1]!);
    expect(sets).toEqual([
      'image.repository=registry.example.com/ml/optimus-controller',
      'sidecar.image.repository=registry.example.com/ml/optimus-sidecar',
    ]);
    const r = await runHelm([
      'template',
      'optimus',
      CHART_DIR,
      '-n',
      'optimus-system',
      ...sets.flatMap((s) => ['--set', s]),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('image: registry.example.com/ml/optimus-controller:0.1.0');
    expect(r.stdout).toContain('registry.example.com/ml/optimus-sidecar:0.1.0');
  });

  it('creates the job namespace and the wrapper ConfigMap the example mounts before applying it', () => {
    const at = (re: RegExp) => commands.findIndex((c) => re.test(c));
    const ns = at(/^kubectl create namespace ml$/);
    // Labelled before the install: the chart binds the controller's writes where the label is then.
    const label = at(/^kubectl label namespace ml optimus\.dev\/jobs=enabled$/);
    const install = at(/^helm install /);
    expect(ns).toBeLessThan(label);
    expect(label).toBeLessThan(install);
    const cm = at(/create configmap optimus-mxnet --from-file=/);
    const apply = at(/apply -f charts\/optimus\/examples\/optimusjob-resnet50\.yaml/);
    expect(ns).toBeGreaterThanOrEqual(0);
    expect(ns).toBeLessThan(cm);
    expect(cm).toBeLessThan(apply);
    const from = /--from-file=(\S+)/.exec(commands[cm]!)?.[1] ?? '';
    expect(existsSync(join(REPO_ROOT, from)), from).toBe(true);
    const example = readFileSync(join(REPO_ROOT, 'charts/optimus/examples/optimusjob-resnet50.yaml'), 'utf8');
    const job = parseAllDocuments(example)
      .map((d) => d.toJS() as { kind: string })
      .find((d) => d.kind === 'OptimusJob');
    expect(JSON.stringify(job)).toContain('"configMap":{"name":"optimus-mxnet"}');
    // The ConfigMap key is the file name the job's command runs.
    expect(JSON.stringify(job)).toContain(`/optimus/${from.split('/').at(-1)}`);
  });
});
