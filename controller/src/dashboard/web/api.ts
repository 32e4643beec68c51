/** Reads the controller's API (same origin: the dashboard is served by the controller). */
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
