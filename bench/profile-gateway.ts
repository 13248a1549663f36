import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadConfig } from './loadgen.js';
import {
  benchDir,
  emit,
  envInt,
  get,
  isMain,
  note,
  removeLater,
  round,
  startSvc,
  tracked,
} from './lib.js';

/**
 * Diagnostic, not part of `npm run bench`: a CPU profile of the real svc gateway process under
 * load, to see where a request's time goes.
 *
 *   node --experimental-websocket dist/bench/profile-gateway.js     (the flag is for Node 20)
 *   BENCH_PROFILE_PATH=/api/health  BENCH_DURATION=5  BENCH_LOADGEN=autocannon|wrk
 *   BENCH_PROFILE_OUT=/tmp/gw.cpuprofile   (open in Chrome DevTools → Performance)
 *   BENCH_PROFILE_KEY=1                    send the access key with every request
 *
 * How: starts `svc serve`, sends the gateway SIGUSR1 (Node opens its inspector on
 * 127.0.0.1:9229), checks over the DevTools protocol that the inspector really is that pid,
 * runs the V8 sampling profiler while the load generator runs, and prints the functions with
 * the most self time as JSON lines.
 */

interface CdpNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

class Cdp {
  private next = 1;
  private readonly pending = new Map<number, (v: any) => void>();
  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener('message', (ev) => {
      const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: unknown };
      if (msg.id !== undefined) this.pending.get(msg.id)?.(msg);
    });
  }
  static open(url: string): Promise<Cdp> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.addEventListener('open', () => resolve(new Cdp(ws)));
      ws.addEventListener('error', () => reject(new Error(`cannot connect to ${url}`)));
    });
  }
  send(method: string, params: Record<string, unknown> = {}): Promise<any> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (msg) =>
        msg.error
          ? reject(new Error(`${method}: ${JSON.stringify(msg.error)}`))
          : resolve(msg.result),
      );
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }
  close(): void {
    this.ws.close();
  }
}

export async function profileGateway(): Promise<void> {
  if (typeof WebSocket !== 'function')
    throw new Error('this Node has no global WebSocket: run with node --experimental-websocket');
  const path = process.env.BENCH_PROFILE_PATH ?? '/api/health';
  const durationS = envInt('BENCH_DURATION', 5);
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-prof-'));
  removeLater(home);
  const svc = await startSvc({ home });
  try {
    const status = await svc.status();
    const gw = status.processes.find((p) => p.role === 'gateway');
    if (!gw) throw new Error('svc status shows no gateway');
    process.kill(gw.pid, 'SIGUSR1');
    let wsUrl: string | undefined;
    for (let i = 0; i < 100 && !wsUrl; i++) {
      await new Promise((r) => setTimeout(r, 50));
      try {
        const list = JSON.parse((await get({ port: 9229, path: '/json/list' })).body) as Array<{
          webSocketDebuggerUrl: string;
        }>;
        wsUrl = list[0]?.webSocketDebuggerUrl;
      } catch {
        // not up yet
      }
    }
    if (!wsUrl)
      throw new Error(
        'the gateway inspector did not open on 127.0.0.1:9229 (is another process using the port?)',
      );
    const cdp = await Cdp.open(wsUrl);
    const pid = (
      await cdp.send('Runtime.evaluate', { expression: 'process.pid', returnByValue: true })
    ).result.value as number;
    if (pid !== gw.pid)
      throw new Error(
        `the inspector on 9229 belongs to pid ${pid}, not the gateway ${gw.pid}; free the port and retry`,
      );
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
    const cfg: LoadConfig = {
      tool: process.env.BENCH_LOADGEN === 'wrk' ? 'wrk' : 'autocannon',
      url: `http://127.0.0.1:${svc.port}${path}`,
      connections: envInt('BENCH_CONNECTIONS', 64),
      pipelining: 1,
      durationS,
      warmupS: 0,
      // BENCH_PROFILE_KEY=1: every request carries the access key (checked unless the route is public).
      ...(process.env.BENCH_PROFILE_KEY === '1'
        ? { headers: { Authorization: `Bearer ${svc.key()}` }, workDir: home }
        : {}),
    };
    const lg = tracked(process.execPath, [join(benchDir, 'loadgen.js'), JSON.stringify(cfg)]);
    let out = '';
    lg.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    lg.stderr!.resume();
    await new Promise((r) => lg.once('close', r));
    const { profile } = (await cdp.send('Profiler.stop')) as {
      profile: { nodes: CdpNode[]; samples: number[]; timeDeltas: number[] };
    };
    cdp.close();
    const outFile =
      process.env.BENCH_PROFILE_OUT ?? join(tmpdir(), `svc-gateway-${Date.now()}.cpuprofile`);
    writeFileSync(outFile, JSON.stringify(profile));
    const load = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { rps?: number };

    // Self time per function, and per file.
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map<number, number>();
    for (const [i, id] of profile.samples.entries())
      self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
    const total = [...self.values()].reduce((a, b) => a + b, 0);
    const fn = new Map<string, number>();
    const file = new Map<string, number>();
    for (const [id, us] of self) {
      const n = byId.get(id)!;
      const url = n.callFrame.url
        .replace(/^file:\/\//, '')
        .replace(/^.*\/(dist\/|node_modules\/)/, '$1');
      const name =
        `${n.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
      fn.set(name, (fn.get(name) ?? 0) + us);
      const f = url ? url.replace(/:\d+$/, '') : n.callFrame.functionName;
      file.set(f, (file.get(f) ?? 0) + us);
    }
    const top = (m: Map<string, number>, k: number) =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, k)
        .map(([name, us]) => ({ name, pct: round((100 * us) / total, 1) }));
    emit({
      bench: 'profile',
      path,
      rps: load.rps ? round(load.rps) : null,
      profile: outFile,
      samples: profile.samples.length,
      top_self: top(fn, 25),
      by_file: top(file, 15),
    });
  } finally {
    await svc.stop();
  }
}

if (isMain(import.meta.url)) {
  profileGateway().then(
    () => process.exit(0),
    (err: Error) => {
      note(err.stack ?? err.message);
      process.exit(2);
    },
  );
}
