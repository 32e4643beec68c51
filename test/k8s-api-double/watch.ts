/**
 * A watch stream: chunked newline-delimited `{type, object}` events. Resuming from a
 * resourceVersion older than the history gets an ERROR event with a 410 Status (the informer
 * then re-lists), like the real API server. BOOKMARKs carry the current resourceVersion.
 */
import type http from 'node:http';
import { compileFieldSelector } from './field-selector';
import { compileLabelSelector } from './label-selector';
import type { ApiOperations } from './operations';
import type { ParsedPath } from './paths';
import type { ResourceType } from './resources';
import { apiVersionOf } from './resources';
import { statusBody } from './status';
import type { K8sObject, StoredEvent } from './store';
import { StoreError, typeKeyOf } from './store';

export interface WatchOptions {
  readonly api: ApiOperations;
  readonly type: ResourceType;
  readonly path: ParsedPath;
  readonly query: URLSearchParams;
  readonly res: http.ServerResponse;
  readonly bookmarkIntervalMs: number;
  /** Ends the stream after this long (the server's request timeout), whatever the client asked. */
  readonly lifetimeMs?: number;
}

/** Opens the stream; returns a function that ends it. */
export function openWatch(o: WatchOptions): () => void {
  const { api, type, path, query, res } = o;
  let labels: ReturnType<typeof compileLabelSelector>;
  let fields: ReturnType<typeof compileFieldSelector>;
  try {
    labels = compileLabelSelector(query.get('labelSelector'));
    fields = compileFieldSelector(query.get('fieldSelector'));
  } catch (err) {
    throw new StoreError(400, 'BadRequest', (err as Error).message);
  }
  const key = typeKeyOf(type);
  const matches = (obj: K8sObject) =>
    (path.namespace === undefined || obj.metadata.namespace === path.namespace) &&
    (path.name === undefined || obj.metadata.name === path.name) &&
    labels(obj.metadata.labels ?? {}) &&
    fields(obj);
  const write = (type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  res.flushHeaders(); // the client waits for the headers before it reads events

  const rvParam = query.get('resourceVersion');
  const since = rvParam === null || rvParam === '' || rvParam === '0' ? null : Number(rvParam);
  if (since !== null) {
    const backlog = api.store.eventsSince(since);
    if (backlog === null) {
      write(
        'ERROR',
        statusBody(410, 'Expired', `too old resource version: ${since} (${api.store.oldestWatchable})`),
      );
      res.end();
      return () => undefined;
    }
    for (const e of backlog) if (e.typeKey === key && matches(e.object)) write(e.type, e.object);
  } else {
    // No resourceVersion: synthetic ADDED for every current object, then changes.
    for (const obj of api.store.list(type, path.namespace)) if (matches(obj)) write('ADDED', obj);
  }
  const unsubscribe = api.store.subscribe((e: StoredEvent) => {
    if (e.typeKey === key && matches(e.object)) write(e.type, e.object);
  });
  const timers: NodeJS.Timeout[] = [];
  if (query.get('allowWatchBookmarks') === 'true') {
    timers.push(
      setInterval(
        () =>
          write('BOOKMARK', {
            kind: type.kind,
            apiVersion: apiVersionOf(type),
            metadata: { resourceVersion: api.store.resourceVersion },
          }),
        o.bookmarkIntervalMs,
      ),
    );
  }
  const timeout = Number(query.get('timeoutSeconds') ?? '0');
  const end = () => {
    unsubscribe();
    timers.forEach(clearInterval);
    timers.forEach(clearTimeout);
    if (!res.writableEnded) res.end();
  };
  if (timeout > 0) timers.push(setTimeout(end, timeout * 1000));
  if (o.lifetimeMs !== undefined) timers.push(setTimeout(end, o.lifetimeMs));
  res.on('close', end);
  return end;
}
