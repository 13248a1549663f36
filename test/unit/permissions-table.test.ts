import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  applyMode,
  emptyRules,
  evaluate,
  insistOnAsk,
  loadShellParser,
  type Decision,
} from '../../src/workers/agent/permissions/index.js';

/**
 * The permission engine against the shapes an attacker (or a careless model) would try, by class,
 * each with what bash really does with it; and the everyday commands that must stay quiet.
 * Issue #20's examples are all here. Home is /home/u, the session works in /home/u/proj.
 */

await loadShellParser();

const HOME = '/home/u';
const CWD = '/home/u/proj';
const env = { home: HOME, svcHome: '/home/u/.svc', svcPids: [4242, 4243], sandboxed: true };
const term = (command: string, cwd: string | null = CWD): Decision =>
  evaluate({ tool: 'terminal', command, cwd }, emptyRules(), env);

type Want = 'allow' | 'ask' | 'deny' | `hard: ${string}` | `rule: ${string}` | 'always-ask';

function check(command: string, want: Want, cwd: string | null = CWD): void {
  const d = term(command, cwd);
  const got = `${d.verdict} [${d.rule}] ${d.reason}`;
  const label = `${JSON.stringify(command)} → ${got}`;
  if (want.startsWith('hard: ')) {
    assert.is(d.verdict, 'deny', label);
    assert.ok(d.hard, label);
    assert.is(d.rule, want, label);
  } else if (want.startsWith('rule: ')) {
    assert.is(d.verdict, 'ask', label);
    assert.is(d.rule, `built-in: ${want.slice(6)}`, label);
  } else if (want === 'always-ask') {
    assert.is(d.verdict, 'ask', label);
    assert.ok(d.askAlways, label);
    assert.is(applyMode(d, 'auto'), 'ask', label);
    assert.is(applyMode(d, 'strict'), 'deny', label);
  } else {
    assert.is(d.verdict, want, label);
    if (want === 'ask') assert.not.ok(d.hard, label);
  }
}

const CLASSES: Record<string, [string, Want][]> = {
  // GNU rm takes any unambiguous prefix of a long option, and options anywhere before `--`.
  'GNU options': [
    ['rm --rec -f ~', 'hard: rm-home'],
    ['rm --recursive --force ~', 'hard: rm-home'],
    ['rm --r -f ~', 'hard: rm-home'],
    ['rm --recu ~', 'hard: rm-home'],
    ['rm ~ -rf', 'hard: rm-home'],
    ['rm -f ~ --rec', 'hard: rm-home'],
    ['rm -fR ~', 'hard: rm-home'],
    ['rm -vrf /', 'hard: rm-root'],
    ['rm -r -- /', 'hard: rm-root'],
    ['rm --force --recursive --no-preserve-root /', 'hard: rm-root'],
    ['rm --one-file-system -r /', 'hard: rm-root'],
    ['chmod --rec 777 /', 'hard: chmod-recursive'],
    ['chown --recursive --from=a me /etc', 'hard: chown-recursive'],
    ['chmod -vR 777 ~', 'hard: chmod-recursive'],
    ['rm -- -r', 'allow'],
    ['rm -f ./--rec', 'allow'],
    ['rm -f ~/notes.txt', 'allow'],
    ['rm --force x.o', 'allow'],
    ['rm -i -- x', 'allow'],
  ],
  'wrappers in front': [
    ['command rm -rfv ~', 'hard: rm-home'],
    ['command -p rm -rf ~', 'hard: rm-home'],
    ['builtin command rm -rf ~', 'hard: rm-home'],
    ['exec rm -rf ~', 'hard: rm-home'],
    ['nohup rm -rf ~ &', 'hard: rm-home'],
    ['env -i rm -rf ~', 'hard: rm-home'],
    ['env -u X rm -rf /', 'hard: rm-root'],
    ['nice -n 19 ionice -c3 rm -rf ~', 'hard: rm-home'],
    ['timeout -s KILL 5 rm -rf ~', 'hard: rm-home'],
    ['stdbuf -o0 rm -rf ~', 'hard: rm-home'],
    ['setsid rm -rf ~', 'hard: rm-home'],
    ['doas rm -rf /', 'hard: rm-root'],
    ['sudo -E -u root -- rm -rf /', 'hard: rm-root'],
    ['command -v rm', 'allow'],
    ['command -V rm', 'allow'],
    ['type -a rm', 'allow'],
  ],
  'shell grouping': [
    ['time { rm -rf ~; }', 'ask'],
    ['{ rm -rf ~; }', 'hard: rm-home'],
    ['( rm -rf ~ )', 'hard: rm-home'],
    ['if true; then rm -rf ~; fi', 'hard: rm-home'],
    ['while false; do rm -rf ~; done', 'hard: rm-home'],
    ['for x in 1; do rm -rf ~; done', 'hard: rm-home'],
    ['case x in x) rm -rf ~;; esac', 'hard: rm-home'],
    ['! rm -rf ~', 'hard: rm-home'],
    ['true && rm -rf ~ || true', 'hard: rm-home'],
    ['rm -rf ~ 2>/dev/null', 'hard: rm-home'],
    ['{ rm -rf ~; } > log', 'hard: rm-home'],
    ['until false; do rm -rf /; done', 'hard: rm-root'],
    ['select x in a; do rm -rf /; done', 'hard: rm-root'],
    ['[[ -d x ]] && rm -rf ~', 'hard: rm-home'],
    ['[ -d x ] || rm -rf ~', 'hard: rm-home'],
    ['((1)) && rm -rf ~', 'hard: rm-home'],
    ['time rm -rf ~', 'hard: rm-home'],
  ],
  expansions: [
    ['rm -rf "${HOME:?}/"', 'hard: rm-home'],
    ['rm -rf "${HOME:?not set}"', 'hard: rm-home'],
    ['rm -rf ${HOME%/}/', 'hard: rm-home'],
    ['rm -rf "${HOME}"', 'hard: rm-home'],
    ['rm -rf ${HOME:-/tmp}', 'hard: rm-home'],
    ['rm -rf "$HOME/"*', 'hard: rm-home'],
    ['rm -rf ~/', 'hard: rm-home'],
    ['rm -rf $HOME/..', 'hard: rm-home'],
    ["rm -rf $'\\x7e'", 'allow'],
    ['rm -rf "~"', 'allow'],
    ['rm -rf \\~', 'allow'],
    ['X=/; rm -rf $X', 'hard: rm-root'],
    ['d=build; rm -rf $d', 'allow'],
    ['HOME=/; rm -rf ~', 'hard: rm-root'],
    ['rm -rf $SVC_HOME', 'always-ask'],
    ['rm -rf ${X:+/}', 'ask'],
    ['rm -rf "$UNSET"/', 'rule: recursive delete'],
    ['rm -rf ~+/build', 'allow'],
    ['rm -rf ~-', 'rule: recursive delete'],
    ['rm -rf {~,/tmp/x}', 'rule: recursive delete'],
    ['rm -rf ~root', 'rule: recursive delete'],
    ['rm -rf $(echo ~)', 'rule: recursive delete'],
    ['rm -rf `pwd`/..', 'rule: recursive delete'],
    ['rm -rf "$PWD"/*', 'allow'],
    ['rm -rf "$PWD"/..', 'hard: rm-home'],
  ],
  'command word': [
    ['/bin/r? -rf ~', 'rule: could not see through'],
    ['/bin/r* -rf ~', 'rule: could not see through'],
    ['/bin/[r]m -rf ~', 'rule: could not see through'],
    ['$RM -rf ~', 'ask'],
    ['${CMD} x', 'ask'],
    ['$(echo rm) -rf ~', 'ask'],
    ['"$X" y', 'ask'],
    ["r''m -rf ~", 'hard: rm-home'],
    ['\\rm -rf ~', 'hard: rm-home'],
    ["$'\\x72\\x6d' -rf ~", 'hard: rm-home'],
    ['"/bin/rm" -rf ~', 'hard: rm-home'],
    ['./build.sh', 'allow'],
    ['bin/tool --help', 'allow'],
  ],
  'cd and the working folder': [
    ['cd $UNSET_VAR && rm -rf *', 'ask'],
    ['cd && rm -rf *', 'hard: rm-home'],
    ['cd "" && rm -rf *', 'hard: rm-home'],
    ['cd ~ && rm -rf *', 'hard: rm-home'],
    ['cd ~/Documents && rm -rf *', 'rule: recursive delete'],
    ['cd .. && rm -rf *', 'hard: rm-home'],
    ['cd / && rm -rf *', 'hard: rm-root'],
    ['cd /etc && rm -rf *', 'hard: rm-system'],
    ['cd - && rm -rf *', 'ask'],
    ['cd ~/Documents && bash -c "rm -rf *"', 'rule: recursive delete'],
    ['cd ~/Documents; sh -c "rm -rf *"', 'rule: recursive delete'],
    ['cd .. && (rm -rf *)', 'hard: rm-home'],
    ['cd ..; cd proj && rm -rf *', 'allow'],
    ['cd ..; rm -rf *', 'hard: rm-home'],
    ['cd build && rm -rf *', 'allow'],
    ['cd build; rm -rf *', 'allow'],
    ['cd src && rm -rf ../dist', 'allow'],
    ['pushd .. && rm -rf *', 'hard: rm-home'],
    ['cd ../other && rm -rf *', 'rule: recursive delete'],
    ['pushd build && popd && rm -rf *', 'ask'],
    ['cd /tmp && rm -rf x', 'allow'],
    ['(cd ..) && rm -rf *', 'allow'],
    ['cd .. | rm -rf *', 'allow'],
    ['cd $D && rm -f x', 'rule: could not see through'],
    ['cd .. && rm -rf proj', 'rule: recursive delete'],
    ['cd ~ && cd - && rm -rf *', 'ask'],
    ['cd /usr && echo x > y', 'hard: system-write'],
    ['cd / && cd home && rm -rf u', 'hard: rm-home'],
  ],
  find: [
    ['find ~ -delete -name x', 'hard: rm-home'],
    ['find ~ -delete', 'hard: rm-home'],
    ['find / -delete', 'hard: rm-root'],
    ['find . ~ -delete', 'hard: rm-home'],
    ['find -L ~ -delete', 'hard: rm-home'],
    ['find ~ -exec rm -rf {} +', 'hard: rm-home'],
    ['find ~ -execdir rm -f {} \\;', 'hard: rm-home'],
    ['find ~ -name x -delete', 'rule: recursive delete'],
    ['find ~/x -name "*.o" -delete', 'rule: recursive delete'],
    ['find . -name "*.o" -delete', 'allow'],
    ['find . -name x | xargs rm -rf', 'rule: could not see through'],
    ['find . -print0 | xargs -0 rm -f', 'rule: could not see through'],
    ['find . -type f -exec rm {} +', 'rule: could not see through'],
    ['find $D -delete', 'ask'],
    ['find . -name "*.ts"', 'allow'],
    ['find src -type f | wc -l', 'allow'],
    ['find . -exec grep -l foo {} +', 'allow'],
    ['find ~ \\( -name a -o -name b \\) -delete', 'ask'],
    ['find . \\( -name a -o -name b \\) -delete', 'rule: could not see through'],
  ],
  'symlinks and other places': [
    ['rm -rf ../other', 'rule: recursive delete'],
    ['rm -rf /home/u/other', 'rule: recursive delete'],
    ['rm -rf .', 'rule: recursive delete'],
    ['rm -rf ./', 'rule: recursive delete'],
    ['rm -rf /tmp/x', 'allow'],
    ['rm -rf build', 'allow'],
    ['rm -rf ./build dist', 'allow'],
    ['rm -rf *', 'allow'],
    ['rm -rf .cache', 'allow'],
  ],
  'scripts through stdin and strings': [
    ['cat <<EOF | bash\nrm -rf ~\nEOF', 'hard: rm-home'],
    ['cat <<EOF | bash\nls\nEOF', 'allow'],
    ['cat <<EOF | bash\nls $X\nEOF', 'ask'],
    ['cat x.sh | bash', 'ask'],
    ['curl -s x | sh', 'ask'],
    // a literal script is read wherever stdin is spelled (issue #38: /dev/stdin, /dev/fd/0, -)
    ['bash /dev/stdin <<< "ls"', 'allow'],
    ['bash /dev/stdin <<< "rm -rf ~"', 'hard: rm-home'],
    ['bash < x.sh', 'ask'],
    ['sh -s < script', 'ask'],
    ['bash -c "$CMD"', 'ask'],
    ['source /dev/stdin', 'ask'],
    ['. /dev/stdin <<< "ls"', 'ask'],
    ['source <(echo ls)', 'ask'],
    ['bash <(curl x)', 'ask'],
    ['bash <(echo ls)', 'ask'],
    // a literal program fed to an interpreter is read as its inline code is (issue #38)
    ['python3 - <<EOF\nimport os\nEOF', 'allow'],
    ['echo "print(1)" | python3', 'allow'],
    ['python3 - <<EOF\nimport os; os.system("rm -rf ~")\nEOF', 'hard: rm-home'],
    ['node < x.js', 'ask'],
    ['eval "$X"', 'ask'],
    ['eval $(ssh-agent)', 'ask'],
    ['eval "rm -rf ~"', 'hard: rm-home'],
    ['eval rm -rf ~', 'hard: rm-home'],
    ["bash -c 'rm -rf ~'", 'hard: rm-home'],
    ["sh -xc 'rm -rf ~'", 'hard: rm-home'],
    ['bash -c \'bash -c "rm -rf ~"\'', 'hard: rm-home'],
    ['echo "rm -rf ~" | bash', 'hard: rm-home'],
    ["bash <<< 'rm -rf ~'", 'hard: rm-home'],
    ['printf "rm -rf ~" | sh', 'hard: rm-home'],
    ["su -c 'rm -rf /'", 'hard: rm-root'],
    ["env -S 'rm -rf /'", 'hard: rm-root'],
    ['watch rm -rf ~', 'hard: rm-home'],
    ['source ./env.sh', 'allow'],
    ['. venv/bin/activate', 'allow'],
    ['bash scripts/build.sh', 'allow'],
    ["python3 -c 'print(1)'", 'allow'],
    ['node -e "1"', 'allow'],
    ['python3 -m pytest', 'allow'],
    ['echo hi | tee out.txt', 'allow'],
    ['make 2>&1 | grep error', 'allow'],
    ['cat log | wc -l', 'allow'],
  ],
  'names defined in the line': [
    ['alias ls=rm; ls', 'ask'],
    ["alias x='rm -rf ~'", 'ask'],
    ['f() { echo; }; f', 'ask'],
    ['function g { ls; }', 'ask'],
    ['f() { rm -rf ~; }', 'hard: rm-home'],
    ['hash -p /bin/rm ls; ls', 'ask'],
    ['coproc rm x', 'ask'],
    ['coproc { ls; }', 'ask'],
    ['trap "rm x" EXIT', 'ask'],
    ['exec > log 2>&1', 'ask'],
    ['exec 3< file', 'ask'],
    ['PATH=/tmp/evil:$PATH ls', 'ask'],
    ['PATH=.; ls', 'ask'],
    ['IFS=/; x', 'ask'],
    ['BASH_ENV=x bash s.sh', 'ask'],
    ['env PATH=/x ls', 'ask'],
    ['enable -f x.so y', 'ask'],
    ['alias', 'allow'],
    ['hash', 'allow'],
    ['trap -l', 'allow'],
    ['export A=1 && npm test', 'allow'],
    ['A=1 npm test', 'allow'],
  ],
  'substitutions and odd parses': [
    ['echo "$(case a in a) rm -rf ~;; esac)"', 'hard: rm-home'],
    ['((x<<2)); rm -rf ~', 'hard: rm-home'],
    ['((x<<2))', 'allow'],
    ['echo $((1<<2))', 'allow'],
    ['cat <<~\nx\n~', 'allow'],
    ['cat <<~ | bash\nrm -rf ~\n~', 'hard: rm-home'],
    ['cat <<$HOME\nrm -rf ~\n$HOME', 'allow'],
    ['cat <<"EOF"\n$(rm -rf ~)\nEOF', 'allow'],
    ['cat <<EOF\n$(rm -rf ~)\nEOF', 'hard: rm-home'],
    ['x=$(rm -rf ~)', 'hard: rm-home'],
    ['echo ${x:-$(rm -rf ~)}', 'hard: rm-home'],
    ['[[ $(rm -rf ~) ]]', 'hard: rm-home'],
    ['a=( $(rm -rf ~) )', 'hard: rm-home'],
    ['echo $(( $(rm -rf ~) ))', 'hard: rm-home'],
    ['diff <(rm -rf ~) x', 'hard: rm-home'],
    ['echo `rm -rf ~`', 'hard: rm-home'],
    ['echo "unterminated', 'ask'],
    ['rm -rf ~ )', 'hard: rm-home'],
    ['ls )', 'ask'],
    ['if; then', 'ask'],
    ['echo a\\\nb', 'allow'],
    ['ls # rm -rf ~', 'allow'],
    ["echo '#'; ls", 'allow'],
  ],
  'kill targets': [
    ['kill -9 -01', 'hard: kill-all'],
    ['kill -9 -0001', 'hard: kill-all'],
    ['kill -s KILL -- -1', 'hard: kill-all'],
    ['kill -n 9 -1', 'hard: kill-all'],
    ['pkill -v foo', 'hard: kill-all'],
    ['pkill -v -f vite', 'hard: kill-all'],
    ['pkill --inverse x', 'hard: kill-all'],
    ['pkill -u me', 'hard: kill-all'],
    ['pgrep node | xargs kill', 'hard: svc-kill'],
    ['pgrep -f svc | xargs kill -9', 'hard: svc-kill'],
    ['pidof node | xargs kill', 'hard: svc-kill'],
    ['kill $(pgrep -f svc)', 'hard: svc-kill'],
    ['kill $(pgrep node)', 'hard: svc-kill'],
    ['kill 4242', 'hard: svc-kill'],
    ['kill -9 $PPID', 'hard: svc-kill'],
    ['kill $(pgrep -f "node server.js")', 'rule: could not see through'],
    ['pgrep vite | xargs kill', 'rule: could not see through'],
    ['kill $PID', 'rule: could not see through'],
    ['kill -9 $(cat app.pid)', 'rule: could not see through'],
    ['kill %1', 'allow'],
    ['kill 1234', 'allow'],
    ['kill -l', 'allow'],
    ['pkill -f vite', 'allow'],
    ["pkill -f '(.|.)*Z'", 'allow'],
    ['pkill -f "node server.js"', 'allow'],
    ['killall nginx', 'allow'],
    ['pkill "$NAME"', 'rule: could not see through'],
  ],
  'moves and other destroyers': [
    ['mv ~ /tmp/x', 'hard: mv-home'],
    ['mv / /x', 'hard: mv-root'],
    ['mv /etc /tmp/etc', 'hard: mv-system'],
    ['mv -t /tmp ~', 'hard: mv-home'],
    ['mv x $DEST', 'rule: could not see through'],
    ['mv a.txt b.txt', 'allow'],
    ['mv src/a.ts src/b.ts', 'allow'],
    ['chmod 600 $F', 'rule: could not see through'],
    ['truncate -s 0 $LOG', 'rule: could not see through'],
    ['dd if=/dev/zero of=$X', 'rule: could not see through'],
    ['echo x > "$OUT"', 'rule: could not see through'],
    ['echo x > $(mktemp)', 'rule: could not see through'],
    ['shred -u $F', 'ask'],
    ['ls | xargs rm', 'rule: could not see through'],
    ['echo a b | xargs rm', 'allow'],
    ['echo / | xargs rm -rf', 'hard: rm-root'],
  ],
  "svc's home": [
    ['cd "$SVC_HOME" && cat access_key', 'always-ask'],
    [
      'cd "$SVC_HOME" && sqlite3 svc.db "update sessions set permission_mode=\'auto\'"',
      'always-ask',
    ],
    ['cd ~/.svc && ls', 'always-ask'],
    ['cat ~/.svc/access_key', 'always-ask'],
    ['ls $SVC_HOME', 'always-ask'],
    ['sqlite3 /home/u/.svc/svc.db .tables', 'always-ask'],
    ['cp /tmp/p.yml ~/.svc/permissions.yml', 'always-ask'],
    ['echo x >> ~/.svc/permissions.yml', 'always-ask'],
    ['grep -r key /home/u/.svc', 'always-ask'],
    ['cd ~/.svc/memory && cat notes.md', 'always-ask'],
    ['python3 x.py --db=/home/u/.svc/svc.db', 'always-ask'],
  ],
  'keys and secrets': [
    ['cat ~/.ssh/*', 'rule: secrets'],
    ['cat ~/.ssh/deploy_key', 'rule: secrets'],
    ['cp ~/.ssh/config /tmp/x', 'rule: secrets'],
    ['cat ~/.gnupg/private-keys-v1.d/x.key', 'rule: secrets'],
    ['cat ~/.ssh/id_rsa', 'rule: secrets'],
    ['cat .env', 'rule: secrets'],
    ['cat ~/.ssh/id_rsa.pub', 'allow'],
    ['ls ~/.ssh', 'allow'],
    ['cat .env.example', 'allow'],
  ],
  'devices and disks': [
    ['mkfs.ext4 -F rootfs.img', 'allow'],
    ['mkfs.vfat disk.img', 'allow'],
    ['mkswap ./swapfile', 'allow'],
    ['mkfs.ext4 /dev/sdb1', 'hard: mkfs'],
    ['mkfs /dev/nvme0n1p1', 'hard: mkfs'],
    ['dd if=img of=disk.img', 'allow'],
    ['dd if=x of=/dev/sda', 'hard: dd-device'],
    ['cat fw.hex > /dev/ttyUSB0', 'allow'],
    ['echo 1 > /dev/ttyACM0', 'allow'],
    ['cat x > /dev/sda', 'hard: system-write'],
    ['echo x > /dev/mem', 'hard: system-write'],
    ['echo x > /dev/null', 'allow'],
    ['echo x >&2', 'allow'],
    ['cmd 2>&1 | tee log', 'allow'],
  ],
  'system folders': [
    ['echo x > /etc/hosts', 'hard: system-write'],
    ['echo x > /usr/src/app/x', 'hard: system-write'],
    ['tee /usr/bin/x < y', 'hard: system-write'],
    ['echo x > /proc/sys/vm/drop_caches', 'hard: system-write'],
    ['rm -rf /usr', 'hard: rm-system'],
    ['rm -rf /usr/*', 'hard: rm-system'],
    ['rm -rf /u*', 'hard: rm-system'],
  ],
  'everyday work': [
    ['npm test', 'allow'],
    ['npm run build', 'allow'],
    ['npm ci', 'allow'],
    ['npx tsc --noEmit', 'allow'],
    ['node dist/test/run.js perms', 'allow'],
    ['make -j4', 'allow'],
    ['cargo build --release', 'allow'],
    ['go test ./...', 'allow'],
    ['pytest -x -q', 'allow'],
    ['git status', 'allow'],
    ['git diff --stat', 'allow'],
    ['git add -A && git commit -m "fix: x"', 'allow'],
    ['git log --oneline -20', 'allow'],
    ['git checkout -b feature', 'allow'],
    ['git stash && git pull --rebase && git stash pop', 'allow'],
    ['git push origin main', 'allow'],
    ['ls -la src', 'allow'],
    ['grep -rn "TODO" src | head -20', 'allow'],
    ['rg -n foo --type ts', 'allow'],
    ['cat package.json | jq .scripts', 'allow'],
    ['wc -l src/*.ts', 'allow'],
    ['mkdir -p build && cp -r src/* build/', 'allow'],
    ['rm -rf node_modules && npm install', 'allow'],
    ['echo "export const x = 1;" > src/x.ts', 'allow'],
    ['sed -i "s/a/b/" src/x.ts', 'allow'],
    ['docker build -t app .', 'allow'],
    ['docker run --rm app', 'allow'],
    ['python3 -m venv .venv && . .venv/bin/activate && pip install -r requirements.txt', 'allow'],
    ['for f in src/*.ts; do echo "$f"; done', 'allow'],
    ['x=$(git rev-parse HEAD); echo $x', 'allow'],
    ['tsc -p . 2>&1 | tail -5', 'allow'],
    ['diff <(sort a) <(sort b)', 'allow'],
    ['test -f x && echo yes || echo no', 'allow'],
    ['cd build && cmake .. && make', 'allow'],
    ['head -50 README.md', 'allow'],
    ['find . -name "*.test.ts" | xargs grep -l uvu', 'allow'],
    ['du -sh node_modules', 'allow'],
    ['ps aux | grep node', 'allow'],
    ['curl -s https://example.com', 'ask'],
    ['ssh host ls', 'ask'],
  ],
};

const total = Object.values(CLASSES).reduce((n, c) => n + c.length, 0);

test(`at least 300 cases by class (${total})`, () => {
  assert.ok(total >= 300, `${total} cases`);
});

for (const [name, cases] of Object.entries(CLASSES)) {
  test(`${name}: ${cases.length} cases`, () => {
    for (const [command, want] of cases) check(command, want);
  });
}

test('a session folder under /usr is writable; the rest of /usr is not', () => {
  for (const c of [
    'echo x > out.txt',
    'npm run build > build.log',
    'rm -rf dist',
    'cp a b',
    'tee log < x',
  ])
    check(c, 'allow', '/usr/src/app');
  assert.is(
    evaluate({ tool: 'write_file', path: 'src/index.js', cwd: '/usr/src/app' }, emptyRules(), env)
      .verdict,
    'allow',
  );
  check('echo x > /usr/bin/x', 'hard: system-write', '/usr/src/app');
  check('rm -rf /usr', 'hard: rm-system', '/usr/src/app');
  assert.is(
    evaluate({ tool: 'write_file', path: '/usr/bin/x', cwd: '/usr/src/app' }, emptyRules(), env)
      .rule,
    'hard: system-write',
  );
});

test('symbolic links: a delete or write is judged where the link leads', () => {
  // Not under /tmp: deleting in a temp folder is allowed anyway.
  const root = mkdtempSync(join(dirname(fileURLToPath(import.meta.url)), 'links-'));
  try {
    const home = join(root, 'home');
    const cwd = join(home, 'proj');
    mkdirSync(join(cwd, 'build'), { recursive: true });
    mkdirSync(join(root, 'outside'), { recursive: true });
    symlinkSync(join(root, 'outside'), join(cwd, 'link'));
    symlinkSync(home, join(cwd, 'homelink'));
    symlinkSync('/etc', join(cwd, 'etclink'));
    const e = { home, svcHome: join(home, '.svc'), svcPids: [], sandboxed: true };
    const t = (command: string) => evaluate({ tool: 'terminal', command, cwd }, emptyRules(), e);
    assert.is(t('rm -rf link/*').rule, 'built-in: recursive delete');
    assert.is(t('rm -rf link/').rule, 'built-in: recursive delete');
    assert.is(t('rm -rf homelink/').rule, 'hard: rm-home');
    assert.is(t('rm -rf homelink/*').rule, 'hard: rm-home');
    assert.is(t('echo x > etclink/hosts').rule, 'hard: system-write');
    assert.is(t('cd link && rm -rf *').rule, 'built-in: recursive delete');
    assert.is(t('rm -rf build/*').verdict, 'allow');
    writeFileSync(join(cwd, 'build', 'x'), '');
    assert.is(t('rm -rf build').verdict, 'allow');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the approval reason names what could not be seen through, and svc home says it always asks', () => {
  assert.match(term('alias ls=rm; ls').reason, /an alias defined in the line/);
  assert.match(term('echo "x').reason, /syntax error/);
  assert.match(term('bash < x.sh').reason, /bash fed its commands through stdin/);
  assert.match(
    term('cd "$SVC_HOME" && sqlite3 svc.db x').reason,
    /change its own session's mode or rules/,
  );
  const long = term(`echo ${'x'.repeat(20_000)}`);
  assert.ok(long.askAlways, 'a line too long to read always asks');
  assert.match(long.reason, /could not be checked/);
});

test('the sandbox hook: insistOnAsk makes an ask auto mode cannot lift, and leaves a deny alone', () => {
  const allowed = term('ls');
  const outside = insistOnAsk(
    allowed,
    'This command steps outside the sandbox.',
    'sandbox: outside',
  );
  assert.equal(
    [
      outside.verdict,
      outside.askAlways,
      applyMode(outside, 'auto'),
      applyMode(outside, 'interactive'),
      applyMode(outside, 'strict'),
    ],
    ['ask', true, 'ask', 'ask', 'deny'],
  );
  const hard = term('rm -rf /');
  assert.is(insistOnAsk(hard, 'x', 'y'), hard);
});

test('an error inside the engine is a refusal "could not be checked", never an allow or a throw', () => {
  const broken = {
    home: HOME,
    svcHome: '/home/u/.svc',
    get svcPids(): number[] {
      throw new Error('boom');
    },
    sandboxed: true,
  };
  const d = evaluate({ tool: 'terminal', command: 'kill 5', cwd: CWD }, emptyRules(), broken);
  assert.is(d.verdict, 'deny');
  assert.match(d.reason, /could not be checked/);
});

test.run();
