/**
 * `optimus jobs | job | why` against a real controller (the shipped runtime, the real Optimus policy)
 * served by the real HTTP app on an ephemeral port: one job runs, one waits for CPU.
 */
import { spawn } from 'node:child_process';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireToken } from '../../http/auth';
import { listen, type RunningServer } from '../../http/serve';
import { jobSpecSchema } from '../../runtime/job-spec';
import { runOptimus } from '../testing/run-in-process';
import { startTestController, type TestController } from '../testing/controller-server';

let t: TestController;
beforeAll(async () => {
  t = await startTestController();
});
afterAll(async () => {
  await t.close();
});

const REPO = new URL('../../../..', import.meta.url).pathname;

describe('optimus jobs', () => {
  it('lists every job with its state, shape, queue position and why it waits', async () => {
    const r = await runOptimus(['jobs', '--url', t.server.url]);
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^NAMESPACE\s+NAME\s+STATE\s+PS×W\s+PROGRESS\s+REMAINING\s+JCT\s+RESTARTS\s+QUEUE\s+WAITING$/,
    );
    expect(lines[1]).toMatch(/^default\s+small\s+running\s+1×1\s+-\s+\S+\s+-\s+0\s+-$/);
    expect(lines[2]).toMatch(
      /^default\s+big\s+waiting\s+-\s+-\s+-\s+-\s+0\s+1\s+minimum shape 1 PS \+ 1 worker does not fit/,
    );
  });

  it('--json: exactly one JSON document, the rows of the dashboard’s Jobs table', async () => {
    const r = await runOptimus(['jobs', '--json', '--url', t.server.url]);
    const doc = JSON.parse(r.stdout) as {
      jobs: { id: string; phase: string; queuePosition: number | null }[];
    };
    expect(doc.jobs.map((j) => [j.id, j.phase, j.queuePosition])).toEqual([
      ['default/small', 'running', null],
      ['default/big', 'waiting', 1],
    ]);
    expect(r.stderr).toBe('');
  });

  it('an unreachable controller is one line saying what to do', async () => {
    const closed = await listen(new Hono(), 0);
    await closed.close();
    const r = await runOptimus(['jobs', '--url', closed.url]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `optimus: cannot reach the controller at ${closed.url} (ECONNREFUSED): is it running, and is the URL right (--url, OPTIMUS_URL)?\n`,
    );
  });

  it('a URL that is not one is a usage error', async () => {
    const r = await runOptimus(['jobs', '--url', 'localhost:8080']);
    expect(r.stderr).toBe(
      'optimus jobs: --url must be an http:// or https:// URL, got "localhost:8080"\nSee \'optimus jobs --help\'.\n',
    );
  });
});

describe('optimus job NAME', () => {
  it('NAME is in namespace default; --json prints the API’s Job object', async () => {
    const r = await runOptimus(['job', 'small', '--json', '--url', t.server.url]);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    const api = (await (await fetch(`${t.server.url}/api/v1/jobs/default/small`)).json()) as Record<
      string,
      unknown
    >;
    // The plan's times are wall-clock "now" and "now + remaining": they move between two calls.
    const noTs = (o: Record<string, unknown>) => ({
      ...o,
      plan: { ...(o['plan'] as object), ts: 0, predictedCompletionTs: null },
    });
    expect(noTs(doc)).toEqual(noTs(api));
  });

  it('NAMESPACE/NAME, described for a person', async () => {
    const r = await runOptimus(['job', 'default/small', '--url', t.server.url]);
    expect(r.stdout).toMatch(/^Job: +default\/small$/m);
    expect(r.stdout).toMatch(/^Demand: +PS: cpu 1 core, memory 2 GiB; worker: cpu 1 core, memory 4 GiB$/m);
    expect(r.stdout).toMatch(/^Placement: +ps\/0@node-a worker\/0@node-a$/m);
  });

  it('an unknown job is one line; a malformed name a usage error', async () => {
    const r = await runOptimus(['job', 'nope', '--url', t.server.url]);
    expect([r.exitCode, r.stderr]).toEqual([
      1,
      'optimus: no job default/nope on this controller (optimus jobs lists them)\n',
    ]);
    const bad = await runOptimus(['job', 'a/b/c', '--url', t.server.url]);
    expect(bad.stderr).toMatch(/^optimus job: a job is NAME or NAMESPACE\/NAME, got "a\/b\/c"\n/);
  });
});

describe('optimus why NAME', () => {
  it('names the reason, the queue position, the resource that is short and the predicted start', async () => {
    const r = await runOptimus(['why', 'big', '--json', '--url', t.server.url]);
    expect(JSON.parse(r.stdout)).toMatchObject({
      id: 'default/big',
      waiting: true,
      reason: 'minimum shape 1 PS + 1 worker does not fit the free resources',
      queuePosition: 1,
      queueLength: 1,
      minimumShape: { ps: 1, workers: 1 },
      need: { cpu: 4, memory: 6 * 1024 ** 3 },
      free: { cpu: 2, memory: 10 * 1024 ** 3 },
      short: [{ resource: 'cpu', need: 4, free: 2 }],
      predictedStart: { afterJobs: ['default/small'] },
    });
    const text = await runOptimus(['why', 'big', '--url', t.server.url]);
    expect(text.stdout).toMatch(/^Short: +cpu: needs 4 cores, 2 cores free \(2 cores more\)$/m);
    expect(text.stdout).toMatch(
      /^Predicted start: \d\d:\d\d:\d\d wall clock \(in .+\), after default\/small finishes$/m,
    );
  });

  it('a running job is not waiting', async () => {
    const r = await runOptimus(['why', 'default/small', '--url', t.server.url]);
    expect(r.stdout).toBe('default/small is not waiting: running.\n');
  });
});

describe('the bearer token (every route may require one: Authorization: Bearer <token>)', () => {
  let guarded: RunningServer;
  beforeAll(async () => {
    const app = new Hono();
    app.use('*', requireToken('s3cret'));
    app.all('*', (c) =>
      fetch(`${t.server.url}${c.req.path}`, { headers: { accept: c.req.header('accept') ?? '*/*' } }),
    );
    guarded = await listen(app, 0);
  });
  afterAll(async () => {
    await guarded.close();
  });

  it('a 401 is one line naming where the token comes from', async () => {
    const env = { OPTIMUS_API_TOKEN: undefined, OPTIMUS_API_TOKEN_FILE: undefined };
    const r = await withEnv(env, () => runOptimus(['jobs', '--url', guarded.url]));
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(
      `optimus: ${guarded.url} refused the request (401: missing bearer token (Authorization: Bearer <token>)); no token was sent: set OPTIMUS_API_TOKEN, or OPTIMUS_API_TOKEN_FILE to a file holding it (the local mode writes .optimus/local/api-token)\n`,
    );
    const wrong = await withEnv({ OPTIMUS_API_TOKEN: 'nope' }, () =>
      runOptimus(['jobs', '--url', guarded.url]),
    );
    expect(wrong.stderr).toMatch(
      /\(401: invalid bearer token\); the token from OPTIMUS_API_TOKEN was refused/,
    );
  });

  it('OPTIMUS_API_TOKEN is sent as the bearer token', async () => {
    const r = await withEnv({ OPTIMUS_API_TOKEN: 's3cret' }, () =>
      runOptimus(['jobs', '--json', '--url', guarded.url]),
    );
    expect(r.exitCode).toBe(0);
    expect((JSON.parse(r.stdout) as { jobs: unknown[] }).jobs).toHaveLength(2);
  });
});

async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (o: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(o)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  set(vars);
  try {
    return await fn();
  } finally {
    set(before);
  }
}

describe('--watch (a real process, ended by Ctrl-C)', () => {
  it('prints one JSON document per line at each change, live from the event stream, and exits 0 on SIGINT', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'controller/src/cli/main.ts', 'jobs', '--watch', '--json', '--url', t.server.url],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const lines: string[] = [];
    let buffer = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const seen = (n: number) =>
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (lines.length >= n) resolve();
        };
        child.stdout.on('data', (d: Buffer) => {
          buffer += d.toString();
          const parts = buffer.split('\n');
          buffer = parts.pop() ?? '';
          lines.push(...parts);
          check();
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
        check();
      });
    const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      await seen(1);
      expect((JSON.parse(lines[0]!) as { jobs: unknown[] }).jobs).toHaveLength(2);
      // A change: a third job; the controller's `job` event makes the watcher load and print again.
      await t.controller.submit(
        jobSpecSchema.parse({
          name: 'third',
          batchSize: 8,
          stepsPerEpoch: 10,
          psDemand: { cpu: 1 },
          workerDemand: { cpu: 1 },
        }),
      );
      await new Promise<void>((resolve) => {
        const wait = (): void => {
          if (lines.length >= 2) resolve();
          else setTimeout(wait, 50);
        };
        wait();
      });
      const second = JSON.parse(lines[1]!) as { jobs: { id: string }[] };
      expect(second.jobs.map((j) => j.id)).toContain('default/third');
      child.kill('SIGINT');
      expect(await exit).toBe(0);
      expect(buffer).toBe('');
      for (const l of lines) expect(() => JSON.parse(l) as unknown).not.toThrow();
      expect(stderr).toBe('');
    } finally {
      child.kill('SIGKILL');
      await t.controller.remove('default/third').catch(() => undefined);
    }
  }, 60_000);
});
