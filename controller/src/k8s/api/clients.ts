/** The typed API clients the backend uses, made from one KubeConfig. */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  VersionApi,
} from '@kubernetes/client-node';

export interface KubeClients {
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;
  readonly version: VersionApi;
  /** events.k8s.io/v1: what `kubectl describe optimusjob` shows (see `events.ts`). */
  readonly events: EventsV1Api;
}

export function makeClients(config: KubeConfig): KubeClients {
  return {
    config,
    core: config.makeApiClient(CoreV1Api),
    custom: config.makeApiClient(CustomObjectsApi),
    coordination: config.makeApiClient(CoordinationV1Api),
    version: config.makeApiClient(VersionApi),
    events: config.makeApiClient(EventsV1Api),
  };
}

/** The HTTP status of a failed API call, or undefined for other errors. */
export const statusCodeOf = (err: unknown): number | undefined =>
  err instanceof ApiException ? err.code : undefined;

/** A short message for an API error (the Status message when the server sent one). */
export function apiErrorMessage(err: unknown): string {
  if (err instanceof ApiException) {
    const body = err.body as unknown;
    const parsed =
      typeof body === 'string'
        ? (safeJson(body) as { message?: string } | undefined)
        : (body as { message?: string } | undefined);
    const text =
      parsed?.message ?? (typeof body === 'string' ? body : JSON.stringify(body ?? '')).slice(0, 200);
    return text === '' || text === '""' ? `HTTP ${err.code}` : `HTTP ${err.code}: ${text}`;
  }
  return err instanceof Error ? err.message : String(err);
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}
