import type { Method, Route } from './route.js';

export type Match =
  | { kind: 'route'; route: Route; params: Record<string, string> }
  | { kind: 'wrong_method'; allow: Method[] }
  | { kind: 'none' };

interface Compiled {
  route: Route;
  segments: string[];
}

/** Matches `/api/...` paths against `/a/:param/b` patterns; tells a wrong method from an unknown path. */
export class Router {
  private readonly compiled: Compiled[];
  /** Routes without parameters, by method then path: most requests are answered from here. */
  private readonly exact = new Map<string, Map<string, Route>>();

  constructor(readonly routes: Route[]) {
    this.compiled = routes.map((route) => ({ route, segments: route.path.split('/').slice(1) }));
    for (const r of routes) {
      if (r.path.includes(':')) continue;
      let byPath = this.exact.get(r.method);
      if (!byPath) this.exact.set(r.method, (byPath = new Map()));
      byPath.set(r.path, r);
    }
  }

  match(method: string, path: string): Match {
    const hit = this.exact.get(method === 'HEAD' ? 'GET' : method)?.get(path);
    if (hit) return { kind: 'route', route: hit, params: {} };
    const parts = splitPath(path);
    const allow = new Set<Method>();
    for (const c of this.compiled) {
      const params = matchSegments(c.segments, parts);
      if (!params) continue;
      if (c.route.method === method || (method === 'HEAD' && c.route.method === 'GET'))
        return { kind: 'route', route: c.route, params };
      allow.add(c.route.method);
    }
    return allow.size > 0 ? { kind: 'wrong_method', allow: [...allow] } : { kind: 'none' };
  }

  /** The methods some route takes at this path (for OPTIONS). */
  methodsAt(path: string): Method[] {
    const parts = splitPath(path);
    return [
      ...new Set(
        this.compiled.filter((c) => matchSegments(c.segments, parts)).map((c) => c.route.method),
      ),
    ];
  }
}

function splitPath(path: string): string[] {
  const parts = path.split('/').slice(1);
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop(); // tolerate one trailing slash
  return parts;
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] ?? '';
    const v = parts[i] ?? '';
    if (p.startsWith(':')) {
      if (v === '') return undefined;
      let decoded: string;
      try {
        decoded = decodeURIComponent(v);
      } catch {
        return undefined;
      }
      params[p.slice(1)] = decoded;
    } else if (p !== v) return undefined;
  }
  return params;
}
