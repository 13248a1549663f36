import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  applyMode,
  emptyRules,
  evaluate,
  loadShellParser,
  type Decision,
} from '../../src/workers/agent/permissions/index.js';
import { ORDINARY } from '../fixtures/ordinary-commands.js';

/**
 * Issue #20's last two promises: the engine cannot be frozen or crashed by what a model writes,
 * and it stays quiet on the commands agents run all day. The first half feeds it the worst
 * inputs found (the ones that froze or crashed the old lexer, and more of their kind); the
 * second measures the ask rate on a corpus of ordinary build, test, git and search lines.
 */

await loadShellParser();

const HOME = '/home/u';
const CWD = '/home/u/proj';
const env = { home: HOME, svcHome: '/home/u/.svc', svcPids: [4242, 4243], sandboxed: true };
const term = (command: string): Decision =>
  evaluate({ tool: 'terminal', command, cwd: CWD }, emptyRules(), env);

const KB = 1024;
const WORST: Array<[string, string]> = [
  ['100 kB of braces', `echo ${'{a,b}'.repeat((100 * KB) / 5)}`],
  ['nested braces', `rm -rf ${'{'.repeat(2000)}x${'}'.repeat(2000)}`],
  ['a 24 kB glob', `rm -rf ${'*a'.repeat(12 * KB)}`],
  ['a 100 kB glob', `ls ${'?*[a-z]'.repeat((100 * KB) / 7)}`],
  ['catastrophic pkill pattern', "pkill -f '(.|.)*Z'"],
  ['catastrophic pkill pattern, long', `pkill -f '${'(a|a)*'.repeat(2000)}Z'`],
  ['deep $( nesting', `${'echo $('.repeat(3000)}x${')'.repeat(3000)}`],
  ['deep subshells', `${'('.repeat(5000)}rm -rf ~${')'.repeat(5000)}`],
  ['10 000 pipes', `cat x${' | cat'.repeat(10_000)}`],
  ['10 000 chained commands', 'true && '.repeat(10_000) + 'rm -rf ~'],
  ['100 kB unterminated quote', `echo "${'x'.repeat(100 * KB)}`],
  ['100 kB of backslashes', `echo ${'\\'.repeat(100 * KB)}`],
  ['100 kB here-document', `cat <<EOF\n${'line $(rm -rf ~)\n'.repeat((100 * KB) / 17)}EOF`],
  ['100 kB of variables', `rm -rf ${'$A'.repeat(50 * KB)}`],
  ['many cd', `${'cd .. && '.repeat(5000)}rm -rf *`],
  ['NUL and control bytes', `rm -rf ~\u0000${'\u0001\u001b'.repeat(20 * KB)}`],
];

const MAY_ALLOW = new Set([
  'catastrophic pkill pattern',
  'catastrophic pkill pattern, long',
  'nested braces',
]);

for (const [name, line] of WORST) {
  test(`worst input decides, never throws or freezes: ${name} (${Math.round(line.length / KB)} kB)`, () => {
    const cpu0 = process.cpuUsage();
    let d: Decision | undefined;
    assert.not.throws(() => {
      d = term(line);
    });
    const cpuMs = (process.cpuUsage(cpu0).user + process.cpuUsage(cpu0).system) / 1000;
    console.log(`  ${name}: ${d!.verdict} [${d!.rule}] in ${cpuMs.toFixed(1)} ms CPU`);
    // Nothing here is plain but two: a pkill whose pattern cannot reach svc's processes (allowed
    // like `pkill -f vite`) and braces without a comma (bash reads them as one literal name in
    // the working folder). For those the point is that the check ends, not what it decides.
    if (!MAY_ALLOW.has(name)) assert.is.not(d!.verdict, 'allow', `${name}: ${d!.reason}`);
    assert.ok(['allow', 'ask', 'deny'].includes(applyMode(d!, 'interactive')));
    // The engine's own budget is one second of wall clock; CPU well past it means a blow-up.
    assert.ok(cpuMs < 3000, `${name} took ${cpuMs} ms of CPU`);
  });
}

test('the dangerous worst inputs are never allowed', () => {
  for (const line of [
    'true && '.repeat(10_000) + 'rm -rf ~',
    `${'('.repeat(5000)}rm -rf ~${')'.repeat(5000)}`,
    `rm -rf ~\u0000x`,
  ]) {
    const d = term(line);
    assert.is.not(d.verdict, 'allow', `${line.slice(0, 40)}…: ${d.reason}`);
  }
});

test(`the ask rate on ${ORDINARY.length} ordinary agent commands stays low`, () => {
  const asked = ORDINARY.map((c) => [c, term(c)] as const).filter(([, d]) => d.verdict !== 'allow');
  const rate = asked.length / ORDINARY.length;
  console.log(
    `  ask rate: ${asked.length}/${ORDINARY.length} = ${(rate * 100).toFixed(1)}%${asked.map(([c, d]) => `\n    ${c} → ${d.verdict}: ${d.reason}`).join('')}`,
  );
  assert.ok(
    rate <= 0.05,
    `asked ${asked.length} of ${ORDINARY.length}: ${asked.map(([c, d]) => `${c} (${d.reason})`).join('; ')}`,
  );
});

test.run();
