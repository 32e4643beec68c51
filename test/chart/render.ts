/**
 * Renders the chart with the real helm binary and parses the manifests into plain objects.
 *
 * @example
 * const objs = await renderChart({ valuesFiles: ['ci/cert-manager-values.yaml'] });
 * const deploy = findObject(objs, 'Deployment', 'optimus-controller');
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR, runHelm } from './helm';

/** A rendered Kubernetes object: just enough typing to find and inspect it. */
export interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly [field: string]: unknown;
}

export interface RenderOptions {
  /** Values files, relative to the chart directory. */
  readonly valuesFiles?: readonly string[];
  /** `--set key=value` pairs. */
  readonly set?: readonly string[];
  readonly releaseName?: string;
  readonly namespace?: string;
}

export const RELEASE = 'optimus';
export const NAMESPACE = 'optimus-system';

/** The helm arguments shared by `template` and `lint` for one set of values. */
export function valuesArgs(opts: RenderOptions): string[] {
  const args: string[] = [];
  for (const f of opts.valuesFiles ?? []) args.push('-f', join(CHART_DIR, f));
  for (const s of opts.set ?? []) args.push('--set', s);
  return args;
}

const rendered = new Map<string, Promise<string>>();

/**
 * Runs `helm template` and returns the raw YAML, throwing with helm's stderr on failure.
 * Renders are memoised per argument list within a test file (the chart does not change mid-run).
 */
export function renderYaml(opts: RenderOptions = {}): Promise<string> {
  const key = JSON.stringify([opts.releaseName ?? RELEASE, opts.namespace ?? NAMESPACE, valuesArgs(opts)]);
  let result = rendered.get(key);
  if (result === undefined) {
    result = renderUncached(opts);
    rendered.set(key, result);
  }
  return result;
}

async function renderUncached(opts: RenderOptions): Promise<string> {
  const args = [
    'template',
    opts.releaseName ?? RELEASE,
    CHART_DIR,
    '--namespace',
    opts.namespace ?? NAMESPACE,
    ...valuesArgs(opts),
  ];
  const r = await runHelm(args);
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
  return r.stdout;
}

/** Parses a multi-document YAML stream, dropping empty documents. */
export function parseManifests(text: string): K8sObject[] {
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`invalid YAML rendered: ${doc.errors[0]?.message ?? ''}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    objects.push(value as K8sObject);
  }
  return objects;
}

export async function renderChart(opts: RenderOptions = {}): Promise<K8sObject[]> {
  return parseManifests(await renderYaml(opts));
}

/** The one object of a kind whose name ends with `nameSuffix`; throws if there is not exactly one. */
export function findObject(objects: readonly K8sObject[], kind: string, nameSuffix = ''): K8sObject {
  const hits = objects.filter((o) => o.kind === kind && o.metadata.name.endsWith(nameSuffix));
  if (hits.length !== 1) {
    throw new Error(`expected one ${kind} named *${nameSuffix}, found ${hits.length}`);
  }
  return hits[0]!;
}

/** Every `ci/*-values.yaml` variant of the chart (relative paths). */
export function ciValuesFiles(): string[] {
  return readdirSync(join(CHART_DIR, 'ci'))
    .filter((f) => f.endsWith('-values.yaml'))
    .sort()
    .map((f) => join('ci', f));
}
