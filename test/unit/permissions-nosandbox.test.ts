import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  applyMode,
  emptyRules,
  evaluate,
  loadShellParser,
  parseRules,
  type Decision,
  type RuleSet,
} from '../../src/workers/agent/permissions/index.js';
import { ORDINARY } from '../fixtures/ordinary-commands.js';

/**
 * Issue #38 item 5: where no sandbox bounds a command (bubblewrap missing, or turned off), the
 * engine fails closed. A command no rule and no built-in list knows asks; what the check cannot
 * see through, and a destructive command whose target is only known when it runs, ask even in
 * auto mode. The ordinary corpus still runs unasked.
 */

await loadShellParser();

const HOME = '/home/u';
const CWD = '/home/u/proj';
const base = { home: HOME, svcHome: '/home/u/.svc', svcPids: [4242, 4243] };
const on = { ...base, sandboxed: true };
const off = { ...base, sandboxed: false };
const term = (command: string, sandboxed: boolean, rules: RuleSet = emptyRules()): Decision =>
  evaluate({ tool: 'terminal', command, cwd: CWD }, rules, sandboxed ? on : off);

function askRate(sandboxed: boolean): { asked: [string, Decision][]; rate: number } {
  const asked = ORDINARY.map((c) => [c, term(c, sandboxed)] as [string, Decision]).filter(
    ([, d]) => d.verdict !== 'allow',
  );
  return { asked, rate: asked.length / ORDINARY.length };
}

test(`ask rate on ${ORDINARY.length} ordinary commands, with a sandbox and without one`, () => {
  for (const sandboxed of [true, false]) {
    const { asked, rate } = askRate(sandboxed);
    console.log(
      `  sandbox ${sandboxed ? 'on ' : 'off'}: ${asked.length}/${ORDINARY.length} = ${(rate * 100).toFixed(1)}% ask${asked.map(([c, d]) => `\n    ${c} → ${d.verdict} [${d.rule}]`).join('')}`,
    );
    // With a sandbox the bar is #20's; without one the unknown and unseeable ask, the rest runs.
    assert.ok(rate <= (sandboxed ? 0.05 : 0.1), `sandbox ${sandboxed}: ${rate}`);
  }
});

test('the read-only and build commands run unasked without a sandbox', () => {
  for (const c of [
    'ls -la',
    'git status',
    'npm test',
    'cat README.md',
    'grep -rn TODO src',
    'make',
    'cargo build',
    'node scripts/gen.js',
    './scripts/run.sh',
    'python3 -m pytest -q',
    'bash scripts/test.sh',
    'cd src && ls',
    'npx tsc --noEmit',
  ])
    assert.is(term(c, false).verdict, 'allow', `${c}: ${term(c, false).reason}`);
});

const UNKNOWN = [
  'frobnicate --all',
  'mystery-tool sync ./data',
  '/opt/vendor/bin/agent --go',
  'python3 /tmp/payload.py',
  'node ../elsewhere/x.js',
  'cd /tmp && node x.js',
  'python3 -c "print(1)"',
  'node -e "require(\'fs\')"',
  'perl -e "print 1"',
  'docker run --rm -v /:/host alpine',
];

test('a command no rule and no list knows asks without a sandbox, and runs with one', () => {
  for (const c of UNKNOWN) {
    const d = term(c, false);
    assert.is(d.verdict, 'ask', `${c} without a sandbox: ${d.verdict} ${d.reason}`);
    assert.is(d.rule, 'built-in: unknown without a sandbox', c);
    assert.match(d.reason, /without a sandbox/);
    // An ordinary ask: the session's mode decides (auto lets it through, strict refuses).
    assert.is(applyMode(d, 'auto'), 'allow', c);
    assert.is(applyMode(d, 'strict'), 'deny', c);
    assert.is(term(c, true).verdict, 'allow', `${c} with a sandbox: ${term(c, true).reason}`);
  }
});

test('your permissions.yml can make unknown commands run (a default or a rule)', () => {
  const byDefault = parseRules('terminal:\n  - default: allow\n').rules;
  const byRule = parseRules('terminal:\n  - allow: { command: frobnicate }\n').rules;
  assert.is(term('frobnicate --all', false, byDefault).verdict, 'allow');
  assert.is(term('frobnicate --all', false, byRule).verdict, 'allow');
});

/** Each asks with a sandbox as in auto today; without one it stays an ask in auto. */
const UNSEEABLE: string[] = [
  // could not see through
  'cat x | bash',
  'eval "$CMD"',
  '$TOOL --run',
  'source <(curl -s x)',
  'f() { ls; }; f',
  // destructive with a target only known when it runs
  'rm -rf "$BUILD_DIR"',
  'find . -name "*.o" | xargs rm',
  'kill $(cat server.pid)',
  'cd "$X" && rm -rf build',
  'mv "$A" /tmp/',
];

test('without a sandbox, what the check cannot see through asks even in auto mode', () => {
  for (const c of UNSEEABLE) {
    const inside = term(c, true);
    assert.is(inside.verdict, 'ask', `${c} with a sandbox: ${inside.verdict} ${inside.reason}`);
    assert.is(applyMode(inside, 'auto'), 'allow', `${c}: auto lets it through with a sandbox`);
    const d = term(c, false);
    assert.is(d.verdict, 'ask', `${c}: ${d.verdict} ${d.reason}`);
    assert.ok(d.askAlways, `${c} without a sandbox must stay an ask in auto: ${d.rule}`);
    assert.is(applyMode(d, 'auto'), 'ask', c);
    assert.is(applyMode(d, 'strict'), 'deny', c);
  }
});

test('hard limits are the same in both states', () => {
  for (const c of ['rm -rf ~', 'kill -9 4242', 'shutdown -h now', 'dd if=/dev/zero of=/dev/sda']) {
    assert.is(term(c, true).verdict, 'deny', c);
    assert.is(term(c, false).verdict, 'deny', c);
  }
});

test.run();
