import { emptyRules, evaluate, loadShellParser } from '../src/workers/agent/permissions/index.js';
import { FAMILIES } from '../test/fixtures/attack-commands.js';
import { ORDINARY } from '../test/fixtures/ordinary-commands.js';
import { emit, envInt, machine, note, round } from './lib.js';

/**
 * The permission engine's decision time (issue 38): every line of the attack corpus
 * (test/fixtures/attack-commands.ts, plus the two inputs that once took 1.7 s and 1 s) against
 * the ordinary corpus (test/fixtures/ordinary-commands.ts), in the same run, interleaved round by
 * round so machine load hits both alike. BENCH_PERMISSIONS_ROUNDS (default 20) rounds; each
 * decision is timed on its own (wall clock). Goal: every line decides within 50 ms.
 */

const GOAL_MS = 50;
const rounds = envInt('BENCH_PERMISSIONS_ROUNDS', 20);
const env = { home: '/home/u', svcHome: '/home/u/.svc', svcPids: [4242, 4243], sandboxed: true };
const SLOW = {
  'cd a || cd b ×14, then rm': `${'cd a || cd b; '.repeat(14)}rm -rf build`,
  'a variable doubled 22 times': `a=x; ${'a=$a$a; '.repeat(22)}echo "$a"`,
};
const attack = [
  ...Object.values(FAMILIES).flatMap((rows) => rows.map(([line]) => line)),
  ...Object.values(SLOW),
];

function decide(line: string): number {
  const t0 = performance.now();
  evaluate({ tool: 'terminal', command: line, cwd: '/home/u/proj' }, emptyRules(), env);
  return performance.now() - t0;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

await loadShellParser();
for (let i = 0; i < 3; i++) for (const l of [...attack, ...ORDINARY]) decide(l); // warm up
const times = { attack: [] as number[], ordinary: [] as number[] };
const worst = new Map<string, number>();
for (let r = 0; r < rounds; r++) {
  for (const [kind, lines] of [
    ['attack', attack],
    ['ordinary', ORDINARY],
  ] as const) {
    for (const line of lines) {
      const ms = decide(line);
      times[kind].push(ms);
      if (ms > (worst.get(line) ?? 0)) worst.set(line, ms);
    }
  }
  note(`round ${r + 1}/${rounds}`);
}
const stats = (xs: number[]) => ({
  p50_ms: round(pct(xs, 50), 3),
  p99_ms: round(pct(xs, 99), 3),
  max_ms: round(Math.max(...xs), 2),
});
for (const [name, line] of Object.entries(SLOW)) {
  const xs: number[] = [];
  for (let r = 0; r < rounds; r++) xs.push(decide(line));
  emit({ kind: 'slow-input', bench: 'permissions', input: name, ...stats(xs) });
}
const over = [...worst].filter(([, ms]) => ms > GOAL_MS);
const a = stats(times.attack);
const o = stats(times.ordinary);
emit({ kind: 'corpus', bench: 'permissions', corpus: 'attack', lines: attack.length, ...a });
emit({ kind: 'corpus', bench: 'permissions', corpus: 'ordinary', lines: ORDINARY.length, ...o });
emit({
  kind: 'ratios',
  bench: 'permissions',
  rounds,
  attack_over_ordinary_p50: round(a.p50_ms / o.p50_ms, 2),
  attack_over_ordinary_p99: round(a.p99_ms / o.p99_ms, 2),
  goal_ms: GOAL_MS,
  lines_over_goal: over.length,
  slowest: [...worst]
    .sort((x, y) => y[1] - x[1])
    .slice(0, 3)
    .map(([line, ms]) => ({ line: line.slice(0, 60), max_ms: round(ms, 1) })),
  machine: machine(),
});
