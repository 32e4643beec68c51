/**
 * `optimus jobs`, `optimus job NAME`, `optimus why NAME`: the running controller's jobs, one job, and
 * why a job waits — like `kueuectl list workloads` and `adaptdl ls`. Read-only, over the HTTP API
 * (`client/`); `--watch` redraws on every change, `--json` prints one JSON document (one per line with
 * `--watch`). ADR 0034.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { clusterViewSchema, jobListSchema, jobViewSchema } from '../../runtime/api-schemas';
import { jobRows } from '../../dashboard/job-rows';
import { ApiClient, ClientError } from '../client/api-client';
import { jobsText, jobText, whyText } from '../client/render';
import { DEFAULT_URL, resolveTarget } from '../client/target';
import { watch } from '../client/watch';
import { explainWait } from '../client/why';
import { UsageError } from '../output';

interface ClientFlags {
  url?: string;
  watch?: boolean;
  json?: boolean;
}

/** `NAME` (namespace `default`) or `NAMESPACE/NAME` → `namespace/name`. */
export function jobId(arg: string): { namespace: string; name: string; id: string } {
  const parts = arg.split('/');
  const [namespace, name] = parts.length === 1 ? ['default', parts[0]] : parts;
  if (parts.length > 2 || !namespace || !name)
    throw new UsageError(`a job is NAME or NAMESPACE/NAME, got "${arg}"`);
  return { namespace, name, id: `${namespace}/${name}` };
}

const readIfExists = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
};

function clientOf(flags: ClientFlags): ApiClient {
  return new ApiClient(resolveTarget({ url: flags.url, env: process.env, readFile: readIfExists }));
}

const notFound = (id: string) =>
  new ClientError(`no job ${id} on this controller (optimus jobs lists them)`, 404, false);

/** What one command loads and how it prints it, as a person reads it and as JSON. */
interface View<T> {
  load(client: ApiClient, signal?: AbortSignal): Promise<T>;
  text(state: T, width: number | undefined): string;
  json(state: T): unknown;
}

const jobsView: View<Awaited<ReturnType<typeof loadJobs>>> = {
  load: (c, s) => loadJobs(c, s),
  text: (views, width) => jobsText(views, width),
  json: (views) => ({ jobs: jobRows(views, []) }),
};

async function loadJobs(c: ApiClient, signal?: AbortSignal) {
  return (await c.get('/api/v1/jobs', jobListSchema, signal)).jobs;
}

function oneJobView(arg: string): View<Awaited<ReturnType<typeof jobViewSchema.parse>>> {
  const { namespace, name, id } = jobId(arg);
  const path = `/api/v1/jobs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
  return {
    load: async (c, s) => {
      try {
        return await c.get(path, jobViewSchema, s);
      } catch (err) {
        throw err instanceof ClientError && err.status === 404 ? notFound(id) : err;
      }
    },
    text: (v) => jobText(v),
    json: (v) => v,
  };
}

function whyView(arg: string): View<ReturnType<typeof explainWait>> {
  const { id } = jobId(arg);
  return {
    load: async (c, s) => {
      const views = await loadJobs(c, s);
      if (!views.some((v) => v.id === id)) throw notFound(id);
      let cluster = null;
      try {
        cluster = await c.get('/api/v1/cluster', clusterViewSchema, s);
      } catch (err) {
        if (!(err instanceof ClientError && err.status === 404)) throw err;
      }
      return explainWait(views, id, cluster, Date.now());
    },
    text: (a) => whyText(a, Date.now()),
    json: (a) => a,
  };
}

async function run<T>(view: View<T>, flags: ClientFlags, title: string): Promise<void> {
  const client = clientOf(flags);
  const tty = process.stdout.isTTY && !flags.json;
  // A terminal's width cuts the last column; a terminal that reports none (0) cuts nothing.
  const width = (): number | undefined =>
    tty && process.stdout.columns > 0 ? process.stdout.columns : undefined;
  if (!flags.watch) {
    const state = await view.load(client);
    process.stdout.write(
      flags.json ? `${JSON.stringify(view.json(state), null, 2)}\n` : `${view.text(state, width())}\n`,
    );
    return;
  }
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const s of signals) process.on(s, stop);
  let frames = 0;
  try {
    await watch({
      client,
      signal: ac.signal,
      frame: async (signal) => {
        const state = await view.load(client, signal);
        return flags.json ? JSON.stringify(view.json(state)) : view.text(state, width());
      },
      print: (frame) => {
        frames += 1;
        if (flags.json) process.stdout.write(`${frame}\n`);
        else if (tty)
          // Home and clear, then the frame: a redraw in place, as `watch(1)` does.
          process.stdout.write(
            `\x1b[H\x1b[2J${title} · ${client.target.url} · redraws on change · Ctrl-C to stop\n\n${frame}\n`,
          );
        else process.stdout.write(`${frames > 1 ? '\n' : ''}${frame}\n`);
      },
      warn: (m) => process.stderr.write(`optimus: ${m}\n`),
    });
  } finally {
    for (const s of signals) process.off(s, stop);
  }
}

function clientOptions(cmd: Command): Command {
  return cmd
    .option(
      '--url <url>',
      `the controller's API (default: env OPTIMUS_URL, else ${DEFAULT_URL}, the local mode)`,
    )
    .option('--watch', 'redraw on every change (the live event stream, else polling) until Ctrl-C')
    .option('--json', 'print one JSON document (with --watch: one per line, at every change)');
}

export function registerJobCommands(program: Command): void {
  clientOptions(
    program
      .command('jobs')
      .description(
        "the running controller's jobs: state, shape, progress, remaining time, queue position, why they wait",
      ),
  ).action((flags: ClientFlags) => run(jobsView, flags, 'optimus jobs'));
  clientOptions(
    program
      .command('job')
      .description('one job of the running controller: shape, placement, models, predictions, history')
      .argument('<name>', 'NAME (namespace default) or NAMESPACE/NAME'),
  ).action((name: string, flags: ClientFlags) => run(oneJobView(name), flags, `optimus job ${name}`));
  clientOptions(
    program
      .command('why')
      .description(
        'why a job waits: the reason, its queue position, the resource that is short, the predicted start',
      )
      .argument('<name>', 'NAME (namespace default) or NAMESPACE/NAME'),
  ).action((name: string, flags: ClientFlags) => run(whyView(name), flags, `optimus why ${name}`));
}
