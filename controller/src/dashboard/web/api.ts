/**
 * Reads the controller's API (same origin: the dashboard is served by the controller), with its
 * bearer token (ADR 0031). The token arrives once in the link's fragment (`#token=…`, which no
 * server, log or Referer ever sees), is kept in this tab's sessionStorage and removed from the
 * address at once; every request, the live stream included, sends it as `Authorization: Bearer`.
 * EventSource cannot send headers, so the stream is read with fetch.
 *
 * `?live=0` in the page's address turns the live stream off: the page loads its data once and is
 * then idle, which a headless browser needs to take a screenshot (`--virtual-time-budget` waits
 * for the network to go quiet, and an open event stream never does; see the local README).
 */
import type { ClusterView } from '../cluster-view';
import type { JobDetail } from '../job-detail';
import type { Overview } from '../job-rows';

const TOKEN_KEY = 'optimus.apiToken';

/** Takes `token=` out of the fragment (`#token=x`, `#/jobs&token=x`, `#/jobs?token=x`) into sessionStorage. */
function takeTokenFromFragment(): void {
  const m = /[#&?]token=([^&]*)/.exec(location.hash);
  if (!m) return;
  try {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1] ?? ''));
  } catch {
    // storage refused (private mode): the token lives only as long as this page
    memoryToken = decodeURIComponent(m[1] ?? '');
  }
  const rest = location.hash.replace(m[0], m[0].startsWith('#') ? '#' : '').replace(/^#$/, '');
  history.replaceState(history.state, '', `${location.pathname}${location.search}${rest}`);
}

let memoryToken: string | null = null;
const token = (): string | null => {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? memoryToken;
  } catch {
    return memoryToken;
  }
};

// At load, before the router reads the fragment, and whenever a token is pasted into the address.
takeTokenFromFragment();
window.addEventListener('hashchange', takeTokenFromFragment);

const NEEDS_TOKEN =
  'this dashboard needs the API token: open the link the controller printed (…/dashboard/#token=…), ' +
  'or add #token=<the token> to this address (local mode: the file .optimus/local/api-token)';

function headers(accept: string): Record<string, string> {
  const t = token();
  return { accept, ...(t ? { authorization: `Bearer ${t}` } : {}) };
}

async function get<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: headers('application/json') });
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
    if (res.status === 401) throw new Error(NEEDS_TOKEN);
    throw new Error(body?.error?.message ?? `${res.status} ${res.statusText}`);
  }
  return (await res.json()) as T;
}

/**
 * The server-sent events of GET /api/v1/events, read with fetch so they carry the token. Emits
 * `open`, `error` and one event per SSE event type, like EventSource, and reconnects by itself.
 */
class LiveEvents extends EventTarget {
  private stopped = false;
  private controller: AbortController | null = null;

  constructor(private readonly path: string) {
    super();
    void this.run();
  }

  close(): void {
    this.stopped = true;
    this.controller?.abort();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.readOnce();
      } catch {
        // network error or abort: reconnect below
      }
      if (this.stopped) return;
      this.dispatchEvent(new Event('error'));
      await new Promise((r) => setTimeout(r, 2000));
    }
  }

  private async readOnce(): Promise<void> {
    this.controller = new AbortController();
    const res = await fetch(this.path, {
      headers: headers('text/event-stream'),
      signal: this.controller.signal,
      cache: 'no-store',
    });
    if (!res.ok || !res.body) return;
    this.dispatchEvent(new Event('open'));
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        this.dispatch(buffer.slice(0, end));
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      }
    }
  }

  /** One SSE block: `event:` names it (default `message`), `data:` lines are joined. */
  private dispatch(block: string): void {
    let type = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) type = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0 || type !== 'message')
      this.dispatchEvent(new MessageEvent(type, { data: data.join('\n') }));
  }
}

export const api = {
  overview: () => get<Overview>('/api/v1/overview'),
  cluster: () => get<ClusterView>('/api/v1/cluster'),
  job: (id: string) =>
    get<JobDetail>(`/api/v1/jobs/${id.split('/').map(encodeURIComponent).join('/')}/history`),
  /** The live stream (GET /api/v1/events) with the token; an EventSource-like EventTarget. */
  events: (): LiveEvents => new LiveEvents('/api/v1/events'),
};

/** False when the page was opened with `?live=0` (a static snapshot, for screenshots). */
export const liveWanted = (): boolean => new URLSearchParams(location.search).get('live') !== '0';

export type StreamState = 'live' | 'reconnecting' | 'off';

/** Event types the controller streams (GET /api/v1/events). */
const EVENT_TYPES = ['hello', 'decision', 'job', 'progress', 'dropped'] as const;

/**
 * Follows the controller's event stream: `onEvent` on every event, `onState` when the stream opens
 * or drops (it reconnects by itself), or `off` once when the page was opened with `?live=0`.
 */
export function followEvents(onEvent: () => void, onState: (s: StreamState) => void): void {
  if (!liveWanted()) {
    onState('off');
    return;
  }
  const es = api.events();
  es.addEventListener('open', () => onState('live'));
  es.addEventListener('error', () => onState('reconnecting'));
  for (const type of EVENT_TYPES) es.addEventListener(type, onEvent);
}
