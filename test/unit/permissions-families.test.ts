import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  applyMode,
  emptyRules,
  evaluate,
  loadShellParser,
  parseShell,
  type Decision,
} from '../../src/workers/agent/permissions/index.js';
import { FAMILIES, type Want } from '../fixtures/attack-commands.js';
import { ORDINARY } from '../fixtures/ordinary-commands.js';

/**
 * Issue #38 item 6: the engine generalises. Each family of attack shapes is judged by a rule of
 * principle (a runner's inner command is a command, inline code is read for what the hard limits
 * protect, a glob is tried against the protected folders, …), and each family's table holds
 * spellings that no list in the engine names (`my-runner`, `with-retry`, other git keys, other
 * decoders) to show it. The tables live in test/fixtures/attack-commands.ts, which the
 * decision-time bench also runs.
 */

await loadShellParser();

const HOME = '/home/u';
const CWD = '/home/u/proj';
const env = (sandboxed: boolean) => ({
  home: HOME,
  svcHome: '/home/u/.svc',
  svcPids: [4242, 4243],
  sandboxed,
});
const term = (command: string, sandboxed = true): Decision =>
  evaluate({ tool: 'terminal', command, cwd: CWD }, emptyRules(), env(sandboxed));

const RANK = { allow: 0, ask: 1, deny: 2 } as const;

function meets(d: Decision, want: Want): boolean {
  if (want === 'hard') return d.verdict === 'deny' && d.hard;
  if (want === 'deny') return d.verdict === 'deny';
  if (want === 'always') return d.verdict === 'deny' || applyMode(d, 'auto') === 'ask';
  if (want === 'blocked') return d.verdict !== 'allow';
  return d.verdict === 'allow';
}

for (const [family, rows] of Object.entries(FAMILIES)) {
  test(`${family}: ${rows.length} spellings`, () => {
    for (const [line, want] of rows) {
      const d = term(line);
      assert.ok(
        meets(d, want),
        `${JSON.stringify(line)} wants ${want}, got ${d.verdict}${d.askAlways ? ' (always)' : ''} [${d.rule}] ${d.reason}`,
      );
      // Without a sandbox the engine is never less strict.
      const off = term(line, false);
      assert.ok(
        RANK[off.verdict] >= RANK[d.verdict],
        `${JSON.stringify(line)}: ${off.verdict} without a sandbox, ${d.verdict} with one`,
      );
    }
  });
}

test('the ordinary corpus stays unasked with a sandbox after the new rules (1 of 101 asks, the .env copy)', () => {
  const asked = ORDINARY.filter((c) => term(c).verdict !== 'allow');
  assert.equal(asked, ['if [ -f .env.example ]; then cp .env.example .env.local; fi']);
});

/** `cd a || cd b` repeated: each may fail, so the folders the line may be in double each time. */
const CD_CHAIN = `${'cd a || cd b; '.repeat(14)}rm -rf build`;
/** A variable doubled 22 times holds 4 MB. */
const DOUBLED = `a=x; ${'a=$a$a; '.repeat(22)}echo "$a"`;

test('a line that would make the check follow too much work stops at the budget and asks', () => {
  for (const line of [CD_CHAIN, DOUBLED]) {
    const d = term(line);
    assert.is(d.verdict, 'ask', `${line.slice(0, 40)}: ${d.reason}`);
    assert.is(d.rule, 'built-in: budget', `${line.slice(0, 40)}: the budget path decides`);
    assert.ok(d.askAlways, 'a line not checked in full asks in auto mode too');
    assert.match(d.reason, /could not be checked in full/);
  }
  // The walk itself stopped following: the folders are unknown, not 16 384 of them.
  const parsed = parseShell(CD_CHAIN, { home: HOME, cwd: CWD });
  assert.is(parsed.commands.at(-1)!.cwds, null);
  // Under the bounds, the same shapes are followed exactly.
  assert.is(term('cd a || cd b; ls').verdict, 'allow');
  assert.is(term(`a=x; ${'a=$a$a; '.repeat(6)}echo "$a"`).verdict, 'allow');
});

test.run();
