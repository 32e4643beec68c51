/**
 * The client commands' one door to the controller's HTTP API: GETs with the bearer token, answers
 * checked against the API's own zod schemas, and every failure as one line that says what to do
 * (start the controller, set the URL, where the token comes from).
 */
import type { z } from 'zod';
import { errorSchema } from '../../runtime/api-schemas';
import { sseMessages, type SseMessage } from './sse';
import { DEFAULT_URL, LOCAL_TOKEN_FILE, type Target } from './target';

/** A failed call. `transient`: worth retrying (unreachable, 5xx), as a watch does. */
export class ClientError extends Error {
  override readonly name = 'ClientError';
  constructor(
    message: string,
    readonly status: number | null,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Where the token of a 401 should come from, in one clause. */
export function tokenHint(t: Target): string {
  const where = `set OPTIMUS_API_TOKEN, or OPTIMUS_API_TOKEN_FILE to a file holding it (the local mode writes ${LOCAL_TOKEN_FILE})`;
  return t.tokenSource === null
    ? `no token was sent: ${where}`
    : `the token from ${t.tokenSource} was refused: ${where}`;
}

export class ApiClient {
  constructor(
    readonly target: Target,
    private readonly fetchImpl: FetchLike = (url, init) => fetch(url, init),
  ) {}

  /** `GET path`, parsed with `schema`; a 404 keeps its status for the caller to word. */
  async get<S extends z.ZodType>(path: string, schema: S, signal?: AbortSignal): Promise<z.infer<S>> {
    const res = await this.request(path, 'application/json', signal);
    if (!res.ok) throw await this.failure(res);
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      throw new ClientError(
        `${this.target.url}${path} answered ${res.status} with a body that is not JSON`,
        res.status,
        false,
      );
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ClientError(
        `${this.target.url}${path}: unexpected answer (${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}); is this an Optimus controller of this version?`,
        res.status,
        false,
      );
    }
    return parsed.data;
  }

  /**
   * The live event stream (`GET /api/v1/events`), or null when this controller has none (404);
   * it ends when the connection does or `signal` aborts.
   */
  async events(signal: AbortSignal): Promise<AsyncGenerator<SseMessage> | null> {
    const res = await this.request('/api/v1/events', 'text/event-stream', signal);
    if (res.status === 404) return null;
    if (!res.ok || !res.body) throw await this.failure(res);
    return sseMessages(res.body, signal);
  }

  private async request(path: string, accept: string, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { accept };
    if (this.target.token !== null) headers['authorization'] = `Bearer ${this.target.token}`;
    try {
      return await this.fetchImpl(`${this.target.url}${path}`, { headers, ...(signal && { signal }) });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new ClientError(this.unreachable(err), null, true);
    }
  }

  private unreachable(err: unknown): string {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
    const hint =
      this.target.url === DEFAULT_URL
        ? 'is the local mode running (npm start)? For another controller give --url or OPTIMUS_URL (a cluster: kubectl port-forward, see docs/cli.md)'
        : 'is it running, and is the URL right (--url, OPTIMUS_URL)?';
    return `cannot reach the controller at ${this.target.url} (${why}): ${hint}`;
  }

  private async failure(res: Response): Promise<ClientError> {
    let message = res.statusText;
    try {
      const parsed = errorSchema.safeParse(await res.json());
      if (parsed.success) message = parsed.data.error.message;
    } catch {
      // not a JSON error body (a proxy's page): the status line says enough
    }
    if (res.status === 401)
      return new ClientError(
        `${this.target.url} refused the request (401: ${message}); ${tokenHint(this.target)}`,
        401,
        false,
      );
    return new ClientError(
      `${this.target.url} answered ${res.status}: ${message}`,
      res.status,
      res.status >= 500,
    );
  }
}
