import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { benchDir, emit, note } from './lib.js';

/**
 * `npm run bench`: runs bench/http, bench/cold-start, bench/memory and bench/turns one after the
 * other, each in its own process (so each cleans up after itself), passing their JSON lines
 * through, then prints one final line gathering every bench's ratios line.
 *
 * Pass names to run only some: `node dist/bench/run.js http memory`.
 */

const all = ['http', 'cold-start', 'memory', 'turns', 'sandbox'];
all.push('cron'); // scheduled tasks: bench/cron.ts
// issue 13: the MCP tool call through svc against the SDK client alone.
all.push('mcp');
// issue 22: long sessions and a full trash (bench/longs.ts).
all.push('longs');
// issue 38: the permission engine's decision time on the attack corpus against ordinary lines.
all.push('permissions');
// issue 33: what recording usage and checking budgets cost a model call and a turn.
all.push('usage');
/** Run only when named (they need Chromium): `node dist/bench/run.js web-stream`. */
const byName = ['web-stream'];
// issue 36: the search index at a million messages (minutes to seed): `node dist/bench/run.js search`.
byName.push('search');
// issue 35: `svc backup create` and `verify` on a 1 GB home against tar -cf (minutes, 3 GB of disk).
byName.push('backup');
const chosen = process.argv.slice(2).length ? process.argv.slice(2) : all;
for (const c of chosen)
  if (!all.includes(c) && !byName.includes(c))
    throw new Error(`unknown bench ${JSON.stringify(c)}; known: ${[...all, ...byName].join(', ')}`);

let current: ChildProcess | undefined;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    note(`${sig}: stopping the running bench`);
    current?.kill(sig); // it cleans up its own processes and namespaces, then exits
  });
}

function runOne(
  name: string,
): Promise<{ code: number | null; ratios: Record<string, unknown> | undefined }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [join(benchDir, `${name}.js`)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    current = p;
    let buf = '';
    let ratios: Record<string, unknown> | undefined;
    p.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        process.stdout.write(`${line}\n`);
        try {
          const obj = JSON.parse(line) as Record<string, unknown>;
          if (obj.kind === 'ratios') ratios = obj;
        } catch {
          // not JSON; passed through anyway
        }
      }
    });
    p.on('close', (code) => {
      current = undefined;
      if (buf) process.stdout.write(`${buf}\n`);
      resolve({ code, ratios });
    });
  });
}

const results: Record<string, unknown> = {};
let failed = false;
for (const name of chosen) {
  note(`=== ${name} ===`);
  const { code, ratios } = await runOne(name);
  if (code !== 0) failed = true;
  results[name] = ratios ?? { error: `exited with code ${code}` };
}
const met = Object.values(results).every(
  (r) => (r as { all_targets_met?: boolean }).all_targets_met === true,
);
emit({ bench: 'all', kind: 'final', results, all_targets_met: met, measurements_clean: !failed });
process.exit(failed ? 1 : 0);
