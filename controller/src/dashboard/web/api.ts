/**
 * Everything the dashboard asks the controller (same origin: the controller serves it), in one
 * place: the JSON reads and the live event stream. A credential the API needs is added here and
 * nowhere else.
 *
 * `?live=0` in the page's address turns the live stream off: the page loads its data once and is
 * then idle, which a headless browser needs to take a screenshot (`--virtual-time-budget` waits
 * for the network to go quiet, and an open event stream never does; see the local README).
 */
import type { ClusterView } from '../cluster-view';
import type { JobDetail } from '../job-detail';
import type { Overview } from '../job-rows';

async function get<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
    throw new Error(body?.error?.message ?? `${res.status} ${res.statusText}`);
  }
  return (await res.json()) as T;
}

export const api = {
  overview: () => get<Overview>('/api/v1/overview'),
  cluster: () => get<ClusterView>('/api/v1/cluster'),
  job: (id: string) =>
    get<JobDetail>(`/api/v1/jobs/${id.split('/').map(encodeURIComponent).join('/')}/history`),
};

/** False when the page was opened with `?live=0` (a static snapshot, for screenshots). */
export const liveWanted = (): boolean => new URLSearchParams(location.search).get('live') !== '0';

export type StreamState = 'live' | 'reconnecting' | 'off';

/** Event types the controller streams (GET /api/v1/events). */
const EVENT_TYPES = ['hello', 'decision', 'job', 'progress', 'dropped'] as const;

/**
 * Follows the controller's event stream: `onEvent` on every event, `onState` when the stream opens
 * or drops. A stream the server closed for good (a 503 while the controller starts, a restart) is
 * opened again after a pause, not abandoned as EventSource would.
 */
export function followEvents(onEvent: () => void, onState: (s: StreamState) => void): void {
  if (!liveWanted()) {
    onState('off');
    return;
  }
  const open = (): void => {
    const es = new EventSource('/api/v1/events');
    es.addEventListener('open', () => onState('live'));
    es.addEventListener('error', () => {
      onState('reconnecting');
      if (es.readyState !== EventSource.CLOSED) return; // the browser retries by itself
      es.close();
      setTimeout(open, 2000);
    });
    for (const type of EVENT_TYPES) es.addEventListener(type, onEvent);
  };
  open();
}
