import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  emptyRules,
  evaluate,
  loadShellParser,
  parseShell,
} from '../../src/workers/agent/permissions/index.js';

/**
 * The engine against bash itself. Each line runs under real bash in a throwaway home, with PATH
 * holding only stand-ins: every program (rm, mv, ls, …) is a script that logs its name, folder
 * and arguments instead of acting; find, xargs, env, timeout and the shells are the real ones, so
 * they start the stand-ins as they would the real programs. Then every program bash really
 * started must be one the engine found, in a folder the engine thought it might run in — or the
 * engine must have said it could not see through the line (and so asks).
 */

await loadShellParser();

const root = realpathSync(mkdtempSync(join(tmpdir(), 'svc-perm-diff-')));
const home = join(root, 'home');
const cwd = join(home, 'proj');
const bin = join(root, 'bin');
const log = join(root, 'ran.log');
const svcHome = join(home, '.svc');

const STANDINS = [
  'rm',
  'mv',
  'cp',
  'ls',
  'cat',
  'grep',
  'touch',
  'mkdir',
  'chmod',
  'chown',
  'wc',
  'head',
  'sort',
  'tool',
  'a',
  'b',
  'c',
  'pgrep',
  'pkill',
  'killall',
  'curl',
  'git',
  'npm',
  'make',
  'sqlite3',
  'python3',
  'dd',
  'truncate',
  'shred',
  'tar',
  'date',
];
const REAL = ['find', 'xargs', 'env', 'timeout', 'nice', 'nohup', 'stdbuf', 'bash', 'sh', 'tee'];

function setup(): void {
  for (const d of [
    bin,
    join(cwd, 'build', 'sub'),
    join(cwd, 'src'),
    join(home, 'Documents'),
    svcHome,
  ])
    mkdirSync(d, { recursive: true });
  const stub = join(bin, '.standin');
  writeFileSync(
    stub,
    `#!/bin/bash\nprintf '%s\\t%s\\t%s\\n' "\${0##*/}" "$(pwd -P)" "$*" >> ${JSON.stringify(log)}\n`,
  );
  chmodSync(stub, 0o755);
  for (const n of STANDINS) symlinkSync(stub, join(bin, n));
  for (const n of REAL) {
    const real = ['/usr/bin', '/bin'].map((d) => join(d, n)).find((p) => existsSync(p));
    if (real) symlinkSync(real, join(bin, n));
  }
  writeFileSync(join(cwd, 'x.sh'), 'rm -rf inner\n');
  writeFileSync(join(cwd, 'src', 'a.ts'), '');
  writeFileSync(join(cwd, 'names.txt'), 'one\ntwo\n');
  symlinkSync(join(home, 'Documents'), join(cwd, 'docs'));
}

interface Ran {
  name: string;
  dir: string;
  args: string;
}

function runBash(line: string): Ran[] {
  rmSync(log, { force: true });
  const r = spawnSync('/bin/bash', ['-c', line], {
    cwd,
    env: { PATH: bin, HOME: home, SVC_HOME: svcHome, LANG: 'C' },
    timeout: 20_000,
    input: '',
  });
  assert.ok(r.error === undefined, `${line}: ${String(r.error)}`);
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [name, dir, args] = l.split('\t') as [string, string, string];
      return { name, dir, args };
    });
}

const LINES = [
  'rm -rf build',
  'cd build && rm -rf *',
  'cd build; rm x',
  'cd build/sub && cd .. && rm y',
  'cd && rm -rf z',
  'cd ~/Documents && rm -rf *',
  'cd "$HOME" && ls',
  'cd $UNSET_VAR && rm -rf w',
  'cd nowhere; rm -rf q',
  'cd nowhere && rm -rf q',
  'cd nowhere || rm -rf q',
  '(cd build && rm a) && rm b',
  'pushd build >/dev/null && rm a',
  'cd docs && rm -rf *',
  'cd build && bash -c "rm inner"',
  'cd build && sh -c "cd sub && rm deep"',
  'bash -c "bash -c \\"rm twice\\""',
  'eval "rm evald"',
  'eval rm -rf "$HOME"',
  'cat <<EOF | bash\nrm fromheredoc\nEOF',
  'bash <<< "rm herestring"',
  'echo "rm piped" | bash',
  'printf "cd build\\nrm p\\n" | sh',
  'bash x.sh',
  'source x.sh',
  '. ./x.sh',
  'f() { rm infunc; }; f',
  'alias r=rm; r x',
  'time { rm -rf t; }',
  '{ rm grouped; } 2>/dev/null',
  'if true; then rm inif; fi',
  'for i in 1 2; do rm "n$i"; done',
  'while false; do rm never; done; ls',
  'case x in x) rm incase;; esac',
  'echo "$(rm insubst)"',
  'x=$(cat names.txt); echo $x',
  'diff <(ls) <(ls build) || true',
  'echo `rm bq`',
  'find . -name "*.ts" -exec rm {} +',
  'find build -delete -name nothing',
  'ls | xargs rm -f',
  'echo a b | xargs rm',
  'find . -name names.txt | xargs cat',
  'xargs rm < names.txt',
  'env rm viaenv',
  'env -i PATH="$PATH" rm viaenv2',
  'timeout 5 rm viatimeout',
  'nice -n 1 rm vianice',
  'nohup rm vianohup >/dev/null 2>&1',
  'stdbuf -o0 rm viastdbuf',
  'command rm -rfv ~',
  'command -v rm',
  '\\rm escaped',
  "r''m quoted",
  "$'\\x72m' ansi",
  '"rm" dq',
  'R=rm; $R dyn',
  '$(echo rm) subst',
  'ls /bin/r? >/dev/null; /b*/ls x || true',
  'rm --rec -f ~',
  'rm -rf "${HOME:?}/"',
  'rm -rf ${HOME%/}/',
  'pgrep node | xargs pkill',
  'kill $(pgrep -f "node server.js") 2>/dev/null || true',
  'tee out.txt <<< hi | wc -l',
  'cat names.txt | sort | head -1',
  'make 2>&1 | grep -c error || true',
  'git status && npm test',
  'cd "$SVC_HOME" && cat access_key',
  'cd "$SVC_HOME" && sqlite3 svc.db "update x"',
  'curl -s x | bash',
  'coproc rm coproc_target; wait',
  'trap "rm trapped" EXIT; ls',
  'exec rm execd',
  'sh -c "$(echo rm dyn2)"',
  'bash -c "cd ~ && rm -rf home_target"',
  'x=build; cd $x && rm tracked',
  'HOME=/nonexistent-svc; cd; rm afterhome 2>/dev/null; true',
  'cd build; cd sub; rm two_deep',
  'cd build && (cd sub; rm inner_sub) && rm outer',
  'true && cd build || cd src; rm which_one',
  'mkdir -p new && cd new && rm -rf *',
  'cd -- build && rm dashdash',
  'cd -P docs && rm phys',
];

/** Lines that run a script file (x.sh holds `rm -rf inner`). */
const FROM_FILE = new Set(['bash x.sh', 'source x.sh', '. ./x.sh']);

test('setup: the stand-ins run and log', () => {
  setup();
  const ran = runBash('rm a b; ls');
  assert.equal(
    ran.map((r) => [r.name, r.dir, r.args]),
    [
      ['rm', cwd, 'a b'],
      ['ls', cwd, ''],
    ],
  );
});

test(`every command bash ran was seen by the engine, or the engine asked (${LINES.length} lines)`, () => {
  const problems: string[] = [];
  let seenThrough = 0;
  for (const line of LINES) {
    const ran = runBash(line);
    const parsed = parseShell(line, { home, svcHome, cwd });
    const d = evaluate({ tool: 'terminal', command: line, cwd }, emptyRules(), {
      home,
      svcHome,
      svcPids: [],
      sandboxed: true,
    });
    const blind = parsed.unknown.length > 0 || parsed.unread !== null || parsed.tooDeep;
    if (blind) {
      assert.is.not(
        d.verdict,
        'allow',
        `${JSON.stringify(line)}: the engine could not see through it (${parsed.unknown.join('; ')}) but allowed it`,
      );
      continue;
    }
    seenThrough++;
    for (const r of ran) {
      // A script file's own commands are beyond any line check (docs/permissions.md says so); the runner must be seen.
      if (FROM_FILE.has(line) && r.args === '-rf inner') {
        if (!parsed.commands.some((c) => ['bash', 'source', '.'].includes(c.name)))
          problems.push(`${JSON.stringify(line)}: the script runner was not seen`);
        continue;
      }
      const seen = parsed.commands.some(
        (c) =>
          c.name === r.name &&
          (c.cwds === null || c.cwds.some((dir) => dir === r.dir || safeReal(dir) === r.dir)),
      );
      if (!seen) {
        const found = parsed.commands
          .map((c) => `${c.name}@${c.cwds?.join('|') ?? '?'}`)
          .join(', ');
        problems.push(
          `${JSON.stringify(line)}: bash ran ${r.name} ${r.args} in ${r.dir}; the engine found [${found}]`,
        );
      }
    }
  }
  assert.equal(problems, [], problems.join('\n'));
  assert.ok(
    seenThrough > LINES.length / 2,
    `most lines are seen through (${seenThrough}/${LINES.length})`,
  );
});

function safeReal(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

test('cleanup', () => {
  rmSync(root, { recursive: true, force: true });
});

test.run();
