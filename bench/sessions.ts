import { copyFileSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { badCursor, pageQuery } from '../src/gateway/routes/sessions/sessions.js';
import { ApiError } from '../src/shared/errors.js';
import { openAndMigrate, openDb } from '../src/shared/store/db.js';
import {
  insertSessionRow,
  listSessionsJson,
  parseSessionCursor,
  permissionModes,
  reasoningEfforts,
} from '../src/shared/store/sessions.js';
import { newId } from '../src/shared/store/util.js';
import {
  benchDir,
  descendants,
  isMain,
  note,
  removeLater,
  startSvc,
  stopTree,
  tracked,
  waitForLine,
} from './lib.js';

/**
 * GET /api/sessions?limit=50 with 10,000 sessions in the store: the svc gateway against a plain
 * node:http server answering the same query with the same DAL on the same svc.db. Both are
 * targets of bench/http.ts (svc_sessions, node_http_sessions; ratio sessions/node_http).
 *
 *   node dist/bench/sessions.js           runs just these two targets through bench/http
 *   BENCH_SESSIONS=10000                  how many sessions to seed
 */

export const SESSIONS_PATH = '/api/sessions?limit=50';

interface Running {
  host: string;
  port: number;
  pids(): number[];
  key?: () => string;
  stop(): Promise<void>;
}

let seeded: Promise<string> | undefined;

/** One $SVC_HOME with N sessions: the baseline reads its svc.db, each svc server a copy of it. */
function seededHome(): Promise<string> {
  seeded ??= Promise.resolve().then(() => {
    const home = mkdtempSync(join(tmpdir(), 'svc-bench-sessions-'));
    removeLater(home);
    const n = Number(process.env.BENCH_SESSIONS ?? 10_000);
    const { db } = openAndMigrate(join(home, 'svc.db'));
    const start = Date.now() - n * 60_000;
    db.transaction(() => {
      for (let i = 0; i < n; i++) {
        const t = start + i * 60_000; // one a minute, like a busy user's history
        const at = new Date(t).toISOString();
        insertSessionRow(db, {
          id: newId('s', t),
          title: `Session ${i}: refactor the parser and write tests`,
          model_id: i % 3 === 0 ? 'main' : null,
          reasoning_effort: reasoningEfforts[i % reasoningEfforts.length]!,
          show_reasoning: i % 2,
          permission_mode: permissionModes[i % permissionModes.length]!,
          working_dir: i % 4 === 0 ? '/home/user/project' : null,
          created_at: at,
          updated_at: at,
          message_count: i % 40,
        });
      }
    })();
    db.close();
    note(`seeded ${n} sessions in ${home}`);
    return home;
  });
  return seeded;
}

export async function svcSessionsServer(
  host = '127.0.0.1',
  engine?: 'uws' | 'node',
): Promise<Running> {
  // A home of its own (one svc per home), holding a copy of the same seeded file.
  const seededDb = join(await seededHome(), 'svc.db');
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-sessions-'));
  removeLater(home);
  copyFileSync(seededDb, join(home, 'svc.db'));
  const svc = await startSvc({ home, host, engine });
  return {
    host,
    port: svc.port,
    pids: () => [svc.pid, ...descendants(svc.pid)],
    key: svc.key,
    stop: svc.stop,
  };
}

export async function nodeHttpSessionsServer(host = '127.0.0.1'): Promise<Running> {
  const home = await seededHome();
  const proc = tracked(
    process.execPath,
    [join(benchDir, 'sessions.js'), 'serve-baseline', join(home, 'svc.db'), host],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  proc.stderr!.resume();
  const m = await waitForLine(proc, /listening (\d+)/, 10_000, 'node:http sessions baseline');
  proc.stdout!.resume();
  return { host, port: Number(m[1]), pids: () => [proc.pid!], stop: () => stopTree(proc) };
}

/** The baseline: node:http, the gateway's query parsing, the same DAL call, the same headers. */
function serveBaseline(dbFile: string, host: string): void {
  process.stdin.on('end', () => process.exit(0)); // exit with the harness
  process.stdin.resume();
  const db = openDb(dbFile);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, {
        'Content-Type': 'application/json',
        'X-Content-Type-Options': 'nosniff',
      });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET' || url.pathname !== '/api/sessions')
      return send(404, { error: { code: 'no_such_route', message: 'not here' } });
    try {
      // The same zod query schema the gateway route applies.
      const parsed = pageQuery.safeParse(Object.fromEntries(url.searchParams));
      if (!parsed.success)
        return send(400, {
          error: {
            code: 'invalid_request',
            message: parsed.error.issues[0]?.message ?? 'bad query',
          },
        });
      const q = parsed.data;
      const after = q.cursor === undefined ? undefined : parseSessionCursor(q.cursor);
      if (q.cursor !== undefined && !after) throw badCursor();
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'X-Content-Type-Options': 'nosniff',
      });
      res.end(listSessionsJson(db, { limit: q.limit, after }));
    } catch (err) {
      if (err instanceof ApiError) send(err.status, err.toBody());
      else send(500, { error: { code: 'internal', message: String(err) } });
    }
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, host, () => {
    const addr = server.address();
    process.stdout.write(`listening ${typeof addr === 'object' && addr ? addr.port : 0}\n`);
  });
}

if (isMain(import.meta.url)) {
  if (process.argv[2] === 'serve-baseline')
    serveBaseline(process.argv[3]!, process.argv[4] ?? '127.0.0.1');
  else {
    process.env.BENCH_TARGETS ||= 'svc_sessions,svc_node_sessions,node_http_sessions';
    // Not a top-level await: http.js imports this module, which must have finished evaluating.
    void import('./http.js')
      .then(({ runHttp }) => runHttp())
      .then(
        (r) => process.exit(r.ok ? 0 : 1),
        (err: Error) => {
          note(err.stack ?? err.message);
          process.exit(2);
        },
      );
  }
}
