/**
 * An HTTP-level Kubernetes API test double (node:http). It speaks the wire protocol the real
 * `@kubernetes/client-node` uses: resource paths, verbs, JSON bodies with
 * `content-type: application/json`, resourceVersion with 409 on stale writes, 404/409/410/422,
 * merge and JSON patch, the status subresource, label/field selectors, and list + watch with
 * chunked newline-delimited events and bookmarks, watch streams it ends at random (as the real
 * server's request timeout does), unknown-field pruning with `Warning` headers (400 with
 * `fieldValidation=Strict`), the namespace lifecycle. It stores objects; scheduling and kubelets
 * are played by `fake-cluster.ts`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileFieldSelector } from './field-selector';
import { compileLabelSelector } from './label-selector';
import type { WriteContext } from './operations';
import { ApiOperations } from './operations';
import { applyPatch } from './patch';
import type { ParsedPath } from './paths';
import { parseApiPath } from './paths';
import type { RecordedRequest } from './request-log';
import { rbacVerb } from './request-log';
import type { ResourceType } from './resources';
import { apiVersionOf } from './resources';
import { statusBody } from './status';
import type { K8sObject } from './store';
import { ObjectStore, StoreError } from './store';
import { openWatch } from './watch';
import { forbiddenMessage, rbacAuthorizer } from './rbac';

export interface ApiDoubleOptions {
  /** `gitVersion` served on /version (the webhook's native-sidecar detection reads it). */
  readonly gitVersion?: string;
  /** Interval of BOOKMARK events on watches that allow them. */
  readonly bookmarkIntervalMs?: number;
  /**
   * Every watch stream is ended after a random time in [minMs, maxMs] (the real server ends
   * watches after a random time between --min-request-timeout and twice that). Default: never.
   */
  readonly watchLifetime?: { readonly minMs: number; readonly maxMs: number };
  /** Namespaces that exist besides default/kube-*; `null` lets any namespace be used. */
  readonly namespaces?: readonly string[] | null;
  /** Port on 127.0.0.1 (default: any free one). */
  readonly port?: number;
  /**
   * Events kept for watches to resume from (default 1000): a watch that resumes from an older
   * resourceVersion gets 410 Gone and its client must re-list, as after an etcd compaction.
   */
  readonly historyLimit?: number;
  /**
   * Tokens the API server authorizes with RBAC (token → service account `namespace/name`): their
   * requests are checked against the Roles, ClusterRoles and bindings stored in the double, and
   * refused with 403 as a real server would. Other tokens are unrestricted (the test's own).
   */
  readonly rbac?: ReadonlyMap<string, string>;
}

export interface ApiDouble {
  readonly url: string;
  readonly api: ApiOperations;
  /** Every resource request, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Ends every open watch stream (as an API-server restart or a load balancer would). */
  dropWatches(): void;
  /**
   * Answers matching requests with `code` (an InternalError Status) until the returned undo is
   * called: how a test plays an API server that fails one kind of write.
   */
  fail(match: FaultMatch, code?: number): () => void;
  close(): Promise<void>;
}

/** Which requests a fault hits: every given field must equal the request's (RBAC naming). */
export interface FaultMatch {
  readonly group?: string;
  readonly resource?: string;
  readonly verb?: string;
}

interface Fault {
  readonly match: FaultMatch;
  readonly code: number;
}

const hits = (m: FaultMatch, r: { group: string; resource: string; verb: string }): boolean =>
  (m.group === undefined || m.group === r.group) &&
  (m.resource === undefined || m.resource === r.resource) &&
  (m.verb === undefined || m.verb === r.verb);

interface Reply {
  readonly code: number;
  readonly body: unknown;
}

const send = (res: http.ServerResponse, { code, body }: Reply, warnings: readonly string[] = []) => {
  res.setHeader('content-type', 'application/json');
  // RFC 7234 warn-code 299, as the API server sends them.
  if (warnings.length)
    res.setHeader(
      'warning',
      warnings.map((w) => `299 - ${JSON.stringify(w)}`),
    );
  res.writeHead(code);
  res.end(JSON.stringify(body));
};

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new StoreError(400, 'BadRequest', 'the request body is not valid JSON');
  }
}

function listReply(api: ApiOperations, t: ResourceType, p: ParsedPath, q: URLSearchParams): Reply {
  let labels: ReturnType<typeof compileLabelSelector>;
  let fields: ReturnType<typeof compileFieldSelector>;
  try {
    labels = compileLabelSelector(q.get('labelSelector'));
    fields = compileFieldSelector(q.get('fieldSelector'));
  } catch (err) {
    throw new StoreError(400, 'BadRequest', (err as Error).message);
  }
  const items = api.store.list(t, p.namespace).filter((o) => labels(o.metadata.labels ?? {}) && fields(o));
  return {
    code: 200,
    body: {
      kind: `${t.kind}List`,
      apiVersion: apiVersionOf(t),
      metadata: { resourceVersion: api.store.resourceVersion },
      items,
    },
  };
}

const FIELD_VALIDATION = ['Strict', 'Warn', 'Ignore'] as const;

function writeContext(q: URLSearchParams, warnings: string[]): WriteContext {
  const v = q.get('fieldValidation') ?? 'Warn';
  const mode = FIELD_VALIDATION.find((m) => m === v);
  if (!mode)
    throw new StoreError(400, 'BadRequest', `fieldValidation must be one of ${FIELD_VALIDATION.join(', ')}`);
  return { fieldValidation: mode, warnings };
}

async function writeReply(
  api: ApiOperations,
  t: ResourceType,
  p: ParsedPath,
  req: http.IncomingMessage,
  q: URLSearchParams,
  warnings: string[],
): Promise<Reply> {
  const body = await readBody(req);
  const name = p.name ?? '';
  const ctx = writeContext(q, warnings);
  switch (req.method) {
    case 'POST':
      if (p.name !== undefined)
        throw new StoreError(405, 'MethodNotAllowed', 'POST is not allowed on a named resource');
      return { code: 201, body: api.create(t, p.namespace, body, ctx) };
    case 'PUT':
      return { code: 200, body: api.replace(t, p.namespace, name, body, p.subresource, ctx) };
    case 'PATCH': {
      api.checkSubresource(t, p.subresource);
      const current = api.mustGet(t, p.namespace, name);
      const patched = applyPatch(current, body, req.headers['content-type'] ?? '') as K8sObject;
      // A patch without a resourceVersion applies to the latest version (no conflict check).
      if (!patched.metadata?.resourceVersion)
        patched.metadata = { ...patched.metadata, resourceVersion: current.metadata.resourceVersion ?? '' };
      return { code: 200, body: api.replace(t, p.namespace, name, patched, p.subresource, ctx) };
    }
    case 'DELETE': {
      if (p.name === undefined)
        throw new StoreError(405, 'MethodNotAllowed', 'deletecollection is not supported by the double');
      const opts = (body ?? {}) as { gracePeriodSeconds?: number };
      const q2 = q.get('gracePeriodSeconds');
      const grace = q2 !== null ? Number(q2) : opts.gracePeriodSeconds;
      return { code: 200, body: api.delete(t, p.namespace, name, grace) };
    }
    default:
      throw new StoreError(405, 'MethodNotAllowed', `method ${req.method} is not allowed`);
  }
}

/** Starts the double on 127.0.0.1 (random port). Preload objects through `api` or over HTTP. */
export async function startApiDouble(opts: ApiDoubleOptions = {}): Promise<ApiDouble> {
  const api = new ApiOperations(
    new ObjectStore(opts.historyLimit),
    opts.namespaces === undefined ? [] : opts.namespaces,
  );
  const requests: RecordedRequest[] = [];
  const closers = new Set<() => void>();
  const faults = new Set<Fault>();
  const server = http.createServer((req, res) => {
    void handle(req, res).catch((err: unknown) =>
      send(res, { code: 500, body: statusBody(500, 'InternalError', String(err)) }),
    );
  });

  const authorize = rbacAuthorizer(api, opts.rbac ?? new Map());
  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://double');
    if (url.pathname === '/version')
      return send(res, {
        code: 200,
        body: { major: '1', minor: '30', gitVersion: opts.gitVersion ?? 'v1.30.0', platform: 'linux/amd64' },
      });
    const p = parseApiPath(url.pathname);
    const t = p ? api.resolve(p.group, p.version, p.plural) : undefined;
    if (!p || !t)
      return send(res, {
        code: 404,
        body: statusBody(404, 'NotFound', 'the server could not find the requested resource'),
      });
    const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    const rbac = {
      group: t.group,
      resource: p.subresource ? `${t.plural}/${p.subresource}` : t.plural,
      verb: rbacVerb(req.method ?? '', p.name !== undefined, watch),
    };
    const record = (status: number) =>
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        ...rbac,
        ...(p.namespace !== undefined ? { namespace: p.namespace } : {}),
        ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
        user: (req.headers.authorization ?? '').replace(/^Bearer\s+/i, ''),
        query: url.search,
        status,
      });
    const user = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    const sa = opts.rbac?.get(user);
    const asked = { user, ...rbac, namespace: p.namespace, name: p.name };
    if (sa !== undefined && !authorize(asked)) {
      req.resume();
      record(403);
      return send(res, { code: 403, body: statusBody(403, 'Forbidden', forbiddenMessage(asked, sa)) });
    }
    const fault = [...faults].find((f) => hits(f.match, rbac));
    if (fault) {
      req.resume(); // the body is not read: drain it so the connection can be reused
      record(fault.code);
      return send(res, { code: fault.code, body: statusBody(fault.code, 'InternalError', 'injected fault') });
    }
    try {
      if (req.method === 'GET' && watch) {
        const life = opts.watchLifetime;
        const close = openWatch({
          api,
          type: t,
          path: p,
          query: url.searchParams,
          res,
          bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 1000,
          ...(life ? { lifetimeMs: life.minMs + Math.random() * Math.max(0, life.maxMs - life.minMs) } : {}),
        });
        record(200);
        closers.add(close);
        res.on('close', () => closers.delete(close));
        return;
      }
      const warnings: string[] = [];
      const reply =
        req.method === 'GET'
          ? p.name !== undefined
            ? (api.checkSubresource(t, p.subresource),
              { code: 200, body: api.mustGet(t, p.namespace, p.name) })
            : listReply(api, t, p, url.searchParams)
          : await writeReply(api, t, p, req, url.searchParams, warnings);
      record(reply.code);
      send(res, reply, warnings);
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      record(err.code);
      send(res, { code: err.code, body: statusBody(err.code, err.reason, err.message) });
    }
  }

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    api,
    requests,
    dropWatches: () => {
      for (const c of closers) c();
    },
    fail: (match, code = 500) => {
      const f: Fault = { match, code };
      faults.add(f);
      return () => faults.delete(f);
    },
    close: async () => {
      for (const c of closers) c();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
