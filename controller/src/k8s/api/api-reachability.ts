/**
 * Before the controller starts its informers and leader election, it waits for the API server:
 * outside a cluster (or while the API is down) it prints ONE clear line naming the server and the
 * reason, then retries with exponential backoff (1 s doubling to 30 s), printing again only when
 * the reason changes — never a stack trace every retry period.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ApiException, type KubeConfig, VersionApi } from '@kubernetes/client-node';
import { apiErrorMessage } from './clients';

/** One line for an error from client-node or the network: `HTTP 403: …`, `ECONNREFUSED …`. */
export function describeError(err: unknown): string {
  if (err instanceof ApiException) return apiErrorMessage(err);
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    const code = (err as NodeJS.ErrnoException).code ?? (cause as NodeJS.ErrnoException | undefined)?.code;
    const text = err.message.split('\n')[0] ?? '';
    return code && !text.includes(code) ? `${code}: ${text}` : text;
  }
  return String(err);
}

/** Where the configuration came from, for the first line a user reads. */
export function configSource(env: NodeJS.ProcessEnv = process.env): string {
  if (env['KUBERNETES_SERVICE_HOST'] && existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token'))
    return 'in-cluster service account';
  if (env['KUBECONFIG']) return `KUBECONFIG=${env['KUBECONFIG']}`;
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return home;
  return 'no kubeconfig and not in a pod (client default)';
}

export interface WaitForApiOptions {
  readonly kubeConfig: KubeConfig;
  /** Where lines go (stderr in the CLI). */
  readonly say: (line: string) => void;
  /** Injected for tests; resolves after `ms`. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Stops waiting (e.g. on SIGTERM); the promise then resolves false. */
  readonly signal?: AbortSignal;
}

/** A sleep that ends early when `signal` aborts (so SIGTERM during a backoff exits at once). */
const abortableSleep =
  (signal: AbortSignal | undefined) =>
  (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });

/** Resolves true once `/version` answers, false when `signal` aborts first. */
export async function waitForApi(o: WaitForApiOptions): Promise<boolean> {
  const api = o.kubeConfig.makeApiClient(VersionApi);
  const server = o.kubeConfig.getCurrentCluster()?.server ?? '(no server)';
  const sleep = o.sleep ?? abortableSleep(o.signal);
  let delay = o.initialDelayMs ?? 1000;
  let last = '';
  for (let attempt = 1; !o.signal?.aborted; attempt++) {
    try {
      const v = await api.getCode();
      if (last)
        o.say(
          `optimus kubernetes: reached the API server ${server} (${v.gitVersion}) after ${attempt} attempts`,
        );
      return true;
    } catch (err) {
      const why = describeError(err);
      if (why !== last)
        o.say(
          `optimus kubernetes: cannot reach the Kubernetes API server ${server} (${why}; config: ${configSource()}); ` +
            `retrying with backoff up to ${Math.round((o.maxDelayMs ?? 30_000) / 1000)} s`,
        );
      last = why;
    }
    await sleep(delay);
    delay = Math.min(delay * 2, o.maxDelayMs ?? 30_000);
  }
  return false;
}
