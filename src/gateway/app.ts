import type { z } from 'zod';
import type { Config } from '../shared/config/schema.js';
import { ApiError, invalidInput, messageOf } from '../shared/errors.js';
import { log } from '../shared/log.js';
import { normalizeOrigin } from '../shared/net/origin.js';
import { changesState, decide, KeyCheck, originAllowed } from './auth.js';
import { readBody, Responder, tooLarge, type RequestInfo } from './http.js';
import type { Route } from './route.js';
import { answerMismatch, checkingAnswers } from './answer-check.js';
import { Router } from './router.js';
import { BodyStream } from './body-stream.js';
import { StaticFiles } from './static.js';
import type { EngineResponse, HttpEngine } from './engine/types.js';
import { WsHub } from './ws/hub.js';
import { apiErrorOf } from './error-map.js';
import { ConnectionCap } from './conn-cap.js';
import type { WsState } from '../shared/protocol/ipc.js';
import { MAX_URL_BYTES, uriTooLong } from './url-limit.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The HTTP + WebSocket front door: for every request, origin and key checks first, then the
 * route table, the drain gate, body parsing and validation, and the handler.
 */
export class Gateway {
  readonly ws: WsHub;
  private readonly key: KeyCheck;
  private cors: Set<string>;
  private router!: Router;
  private readonly staticFiles = new StaticFiles();
  draining = false;
  private retryAfterS = 5;
  handingOver = false;
  private inflight = 0;

  /** A response was written or abandoned (the Responder reports it). */
  settled(): void {
    this.inflight--;
  }

  constructor(
    private config: Config,
    accessKey: string,
    readonly engine: HttpEngine,
    readonly startedAt = Date.now(),
    /** The previous gateway's /ws numbering, on a restart. */
    resume?: WsState,
    /** Connection caps below the descriptor limit (none: unlimited). */
    readonly cap = new ConnectionCap(undefined),
  ) {
    this.key = new KeyCheck(accessKey);
    this.cors = new Set(config.cors.map(normalizeOrigin));
    this.ws = new WsHub(engine, {
      frameLimit: config.limits.ws_frame_bytes,
      idleTopicMs: () => this.config.limits.ws_idle_topic_seconds * 1000,
      resume,
      cap,
      authorize: (info) =>
        decide(
          {
            peerLoopback: info.peerLoopback,
            path: info.path,
            headers: info.headers,
            queryKey: info.query.get('access_key') ?? undefined,
            isPublic: false,
          },
          this.key,
          this.cors,
        ),
    });
    engine.onRequest((res, req) => this.onRequest(res, req));
    if (cap.caps) engine.capConnections(cap.caps.total);
  }

  /** A config change through the API takes effect at once for limits and CORS. */
  updateConfig(config: Config): void {
    this.config = config;
    this.cors = new Set(config.cors.map(normalizeOrigin));
  }

  setRoutes(routes: Route[]): void {
    this.router = new Router(routes);
  }

  get routes(): Route[] {
    return this.router.routes;
  }

  setDraining(on: boolean, retryAfterS = this.retryAfterS): void {
    this.draining = on;
    this.retryAfterS = retryAfterS;
    this.ws.publish('server', on ? 'draining' : 'resumed', { retry_after_s: retryAfterS });
  }

  listen(host: string, port: number, inherited?: unknown): Promise<number> {
    return this.engine.listen(host, port, inherited);
  }

  /** Stops accepting (the successor already listens), closes WebSockets, waits out in-flight requests. */
  async handover(maxWaitMs = 10_000): Promise<number> {
    this.handingOver = true;
    this.engine.stopListening();
    const open = this.ws.closeAll(1012, 'svc is restarting; reconnect');
    const until = Date.now() + maxWaitMs;
    while (this.inflight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    return open + this.inflight;
  }

  private onRequest(res: EngineResponse, req: RequestInfo): void {
    this.inflight++;
    const r = new Responder(res, this, req.method === 'HEAD');
    try {
      const full = this.cap.request(this.inflight + this.ws.count);
      if (full) r.error(full, true);
      else if (req.urlLength > MAX_URL_BYTES) r.error(uriTooLong(), true);
      else this.dispatch(res, req, r);
    } catch (err) {
      this.fail(r, err);
    }
    r.inCallback = false;
  }

  private dispatch(res: EngineResponse, req: RequestInfo, r: Responder): void {
    const origin = req.headers['origin'];
    if (origin !== undefined && this.cors.has(normalizeOrigin(origin))) {
      r.extraHeaders = {
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Expose-Headers': 'Retry-After',
        Vary: 'Origin',
      };
    }
    const hasBody =
      Number(req.headers['content-length'] ?? 0) > 0 ||
      req.headers['transfer-encoding'] !== undefined;
    const isApi = req.path === '/api' || req.path.startsWith('/api/');
    if (req.method === 'OPTIONS') return this.preflight(req, r, isApi);
    if (!isApi && req.path !== '/ws') {
      if (
        !originAllowed(origin, this.cors, req.headers['host'], changesState(req.method, req.path))
      )
        return r.error(
          new ApiError(
            'forbidden_origin',
            `Requests from the origin ${JSON.stringify(origin)} are not allowed.`,
          ),
          hasBody,
        );
      return r.send(this.staticFiles.serve(req, this.key));
    }
    const match = isApi ? this.router.match(req.method, req.path) : ({ kind: 'none' } as const);
    const isPublic = match.kind === 'route' && match.route.public === true;
    const decision = decide(new AuthView(req, isPublic), this.key, this.cors);
    if (!decision.ok) return r.error(decision.error, hasBody);
    if (req.path === '/ws')
      return r.error(
        new ApiError(
          'invalid_request',
          '/ws is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket).',
        ),
        hasBody,
      );
    if (match.kind === 'none') {
      return r.error(
        new ApiError(
          'no_such_route',
          `There is no route ${req.method} ${req.path}; GET /api/openapi.json lists every route.`,
        ),
        hasBody,
      );
    }
    if (match.kind === 'wrong_method') {
      const allow = match.allow.join(', ');
      return r.error(
        new ApiError(
          'method_not_allowed',
          `${req.path} does not take ${req.method}; it takes ${allow}.`,
          undefined,
          { Allow: allow },
        ),
        hasBody,
      );
    }
    const route = match.route;
    if (this.draining && (route.work ?? route.method !== 'GET')) {
      return r.error(
        new ApiError(
          'draining',
          `svc is restarting and takes no new work for now; try again in ${this.retryAfterS} s.`,
          undefined,
          { 'Retry-After': String(this.retryAfterS) },
        ),
        hasBody,
      );
    }
    const query = route.query
      ? this.validate(
          route.query,
          Object.fromEntries(req.query),
          route.fields ?? { what: 'query parameter' },
        )
      : undefined;
    const ctx = new Context(req, match.params, query, r, decision);
    if (route.stream) {
      const body = hasBody ? new BodyStream(res) : undefined;
      if (body) r.onAbort(() => body.abort());
      ctx.body = body;
      return this.run(r, route, ctx);
    }
    if (!BODY_METHODS.has(req.method) || !hasBody) {
      ctx.body = route.body ? this.validate(route.body, {}, route.fields) : undefined;
      return this.run(r, route, ctx);
    }
    const limit = this.config.limits.json_body_bytes;
    if (Number(req.headers['content-length'] ?? 0) > limit) return r.error(tooLarge(limit), true);
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      return r.error(
        new ApiError(
          'unsupported_media_type',
          `Send the body as JSON with "Content-Type: application/json" (got ${JSON.stringify(type || 'none')}).`,
        ),
        true,
      );
    }
    r.watchAbort();
    readBody(res, limit)
      .then(
        (buf) => {
          let parsed: unknown;
          try {
            parsed = buf.length === 0 ? {} : JSON.parse(buf.toString('utf8'));
          } catch (err) {
            throw new ApiError('invalid_request', `The body is not valid JSON: ${messageOf(err)}`);
          }
          ctx.body = route.body ? this.validate(route.body, parsed, route.fields) : undefined;
          return this.run(r, route, ctx);
        },
        (err: unknown) => {
          throw err;
        },
      )
      .catch((err: unknown) =>
        this.fail(r, err, err instanceof ApiError && err.code === 'too_large'),
      );
  }

  private validate(
    schema: z.ZodType,
    value: unknown,
    fields: Route['fields'] = { what: 'request body' },
  ): unknown {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    throw invalidInput(result.error, fields);
  }

  /** Runs a handler; one that answers synchronously is written before the engine's callback returns. */
  private run(r: Responder, route: Route, ctx: Parameters<Route['handler']>[0]): void {
    let out: ReturnType<Route['handler']>;
    try {
      out = route.handler(ctx);
    } catch (err) {
      return this.fail(r, err);
    }
    if (!(out instanceof Promise)) return this.finish(r, route, out);
    r.watchAbort();
    out.then(
      (reply) => this.finish(r, route, reply),
      (err: unknown) => this.fail(r, err),
    );
  }

  private finish(r: Responder, route: Route, reply: Awaited<ReturnType<Route['handler']>>): void {
    if (reply && checkingAnswers) {
      const wrong = answerMismatch(route, reply);
      if (wrong !== undefined) {
        const what = `The answer of ${route.method} ${route.path} does not match its declared schema: ${wrong}`;
        log.error('an answer does not match its declared schema', { route: route.path, wrong });
        return r.error(new ApiError('internal', what));
      }
    }
    if (reply) r.send(reply);
    else if (!r.done && !r.aborted)
      this.fail(r, new Error(`${route.method} ${route.path} answered nothing`));
  }

  private fail(r: Responder, err: unknown, close = false): void {
    r.error(apiErrorOf(err, this.retryAfterS), close);
  }

  private preflight(req: RequestInfo, r: Responder, isApi: boolean): void {
    const origin = req.headers['origin'];
    const methods = isApi ? this.router.methodsAt(req.path) : ['GET'];
    const allow = [...methods, 'OPTIONS'].join(', ');
    if (origin === undefined) {
      // Without an Origin this is no preflight but a question about the routes: only for those allowed to ask.
      const decision = decide(new AuthView(req, false), this.key, this.cors);
      if (!decision.ok) return r.error(decision.error);
      return r.send({ status: 204, headers: { Allow: allow } });
    }
    if (!this.cors.has(normalizeOrigin(origin))) {
      return r.error(
        new ApiError(
          'forbidden_origin',
          `Cross-origin requests from ${JSON.stringify(origin)} are not allowed; add the origin to "cors" in config.yml or pass --cors.`,
        ),
      );
    }
    r.send({
      status: 204,
      headers: {
        Allow: allow,
        'Access-Control-Allow-Methods': allow,
        'Access-Control-Allow-Headers': 'Authorization, X-Access-Key, Content-Type',
        'Access-Control-Max-Age': '600',
      },
    });
  }
}

/** The request as the auth decision sees it; the peer address is read only if the decision needs it. */
class AuthView {
  readonly queryKey = undefined;
  get method(): string {
    return this.req.method;
  }
  constructor(
    private readonly req: RequestInfo,
    readonly isPublic: boolean,
  ) {}
  get peerLoopback(): boolean {
    return this.req.peerLoopback;
  }
  get path(): string {
    return this.req.path;
  }
  get headers(): Record<string, string> {
    return this.req.headers;
  }
}

/** What a handler gets; `local` is worked out only when a handler reads it. */
class Context {
  body: unknown = undefined;
  constructor(
    readonly req: RequestInfo,
    readonly params: Record<string, string>,
    readonly query: unknown,
    readonly responder: Responder,
    private readonly decision: { local: boolean; via: string },
  ) {}
  get local(): boolean {
    return this.decision.local;
  }
  get keyed(): boolean {
    return this.decision.via === 'key';
  }
}
