/**
 * The OpenAPI document passes a real linter: Redocly CLI with its recommended rules (`redocly.yaml`),
 * zero errors and zero warnings but the ones `.redocly.lint-ignore.yaml` justifies. It runs offline:
 * the rules are built in, the document has no remote `$ref`, telemetry and the update check are off.
 * The linted file, `docs/api/openapi.json`, is the document the controller serves.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from './openapi';

const REPO = new URL('../../..', import.meta.url).pathname;
const CLI = join(REPO, 'node_modules/@redocly/cli/bin/cli.js');
const OFFLINE = { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string }[];
}

function lint(args: string[], cwd: string): LintReport {
  const r = spawnSync(process.execPath, [CLI, 'lint', '--format', 'json', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...OFFLINE },
    timeout: 120_000,
  });
  const start = r.stdout.indexOf('{');
  if (start < 0) throw new Error(`redocly printed no report (exit ${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.slice(start)) as LintReport;
}

describe('OpenAPI lint (Redocly CLI, recommended rules)', () => {
  it('docs/api/openapi.json is the served document (regenerate: npm run optimus -- openapi)', () => {
    const file = JSON.parse(readFileSync(join(REPO, 'docs/api/openapi.json'), 'utf8')) as unknown;
    expect(file).toEqual(openApiDocument());
  });

  it('has no error and no warning but the two justified ones', () => {
    const report = lint([], REPO);
    expect(report.problems).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 2 });
  }, 130_000);

  it('is not a linter that passes anything: the issue’s defects are found again', () => {
    const dir = mkdtempSync(join(tmpdir(), 'optimus-openapi-lint-'));
    const doc = structuredClone(openApiDocument()) as Record<string, unknown> & {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    delete doc['servers'];
    delete doc['security'];
    delete doc.paths['/api/v1/jobs']!['get']!['operationId'];
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
    writeFileSync(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\ntelemetry: off\n');
    const rules = new Set(lint(['openapi.json'], dir).problems.map((p) => p.ruleId));
    // (operation-4xx-response too: this copy has no ignore file.)
    expect([...rules]).toEqual(
      expect.arrayContaining(['no-empty-servers', 'operation-operationId', 'security-defined']),
    );
  }, 130_000);
});
