import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  applyMode,
  emptyRules,
  evaluate,
  loadRules,
  loadShellParser,
  parseRules,
  parseShell,
  type Decision,
  type EvalInput,
  type RuleSet,
} from '../../src/workers/agent/permissions/index.js';

await loadShellParser();

const HOME = '/home/u';
const CWD = '/home/u/proj';
const env = { home: HOME, svcHome: '/home/u/.svc', svcPids: [4242, 4243, 4244], sandboxed: true };
const none = emptyRules();

function term(command: string, rules: RuleSet = none, cwd: string | null = CWD): Decision {
  return evaluate({ tool: 'terminal', command, cwd }, rules, env);
}
function call(
  input: Omit<EvalInput, 'cwd'> & { cwd?: string | null },
  rules: RuleSet = none,
): Decision {
  return evaluate({ cwd: CWD, ...input }, rules, env);
}
function rules(yaml: string): RuleSet {
  const r = parseRules(yaml);
  assert.is(r.problem, undefined, `rules should parse: ${r.problem}`);
  return r.rules;
}

/** Each hard deny, in many spellings: wrappers, chaining, nesting, paths, quoting. */
const HARD: Record<string, string[]> = {
  'rm-root': [
    'rm -rf /',
    'rm -fr /',
    'rm -r -f /',
    'rm --recursive --force /',
    'rm -rf /*',
    'rm -Rf --no-preserve-root /',
    'rm / -rf',
    'rm -rf -- /',
    'rm -rf //',
    'sudo rm -rf /',
    'sudo -u root -E rm -rf /',
    'env FOO=1 rm -rf /',
    'FOO=1 BAR=2 rm -rf /',
    '/bin/rm -rf /',
    '/usr/bin/env rm -rf /',
    'nice -n 5 nohup timeout 10 rm -rf /',
    'echo hi; rm -rf /',
    'make && rm -rf /',
    'false || rm -rf /',
    'ls | rm -rf /',
    'ls &\nrm -rf /',
    'echo $(rm -rf /)',
    'echo `rm -rf /`',
    'x="$(rm -rf /)"',
    "bash -c 'rm -rf /'",
    'sh -c "rm -rf /"',
    "sudo bash -lc 'cd /tmp && rm -rf /'",
    'eval "rm -rf /"',
    'echo "rm -rf /" | sh',
    "bash <<< 'rm -rf /'",
    'bash <<EOF\nrm -rf /\nEOF',
    '\\rm -rf /',
    "r''m -rf /",
    '"rm" -rf /',
    "$'\\x72m' -rf /",
    'cd / && rm -rf *',
    'echo / | xargs rm -rf',
    'find / -exec rm -rf {} +',
    'cat <<EOF\n$(rm -rf /)\nEOF',
  ],
  'rm-home': [
    'rm -rf ~',
    'rm -rf ~/',
    'rm -rf $HOME',
    'rm -rf "$HOME"',
    'rm -rf ${HOME}/',
    'rm -rf /home/u',
    'rm -rf ~/*',
    'sudo rm -r ~',
    'rm -rf ..',
    'rm -rf /home',
    'find ~ -delete',
  ],
  'rm-system': [
    'rm -rf /usr',
    '/bin/rm -rf /etc/',
    'sudo rm -rf /var',
    'rm -rf /System',
    'rm -rf /boot',
    'rm -rf /lib64',
    'rm -rf /opt/*',
    'rm -rf /sbin /bin',
    'rm -rf /u*',
  ],
  mkfs: [
    'mkfs /dev/sda1',
    'mkfs.ext4 /dev/sdb',
    'sudo mkfs.vfat -F 32 /dev/sdc1',
    '/sbin/mkfs.xfs /dev/nvme0n1',
  ],
  'dd-device': ['dd if=/dev/zero of=/dev/sda bs=1M', 'sudo dd if=img.iso of=/dev/disk2'],
  partition: [
    'fdisk /dev/sda',
    'sudo parted /dev/sda mklabel gpt',
    'wipefs -a /dev/sdb',
    'sfdisk /dev/sda < layout.txt',
  ],
  power: [
    'shutdown -h now',
    'sudo shutdown -r now',
    '/sbin/shutdown now',
    'reboot',
    'sudo reboot',
    'poweroff',
    'halt',
    'init 0',
    'init 6',
    'sudo systemctl poweroff',
    'systemctl reboot',
    'systemctl halt',
    'make && reboot',
    '$(reboot)',
    'exec reboot',
    'timeout 5 sudo -n reboot',
    'ssh-add; reboot',
  ],
  'kill-all': [
    'kill -9 -1',
    'kill -KILL -1',
    'kill -SIGKILL -1',
    'kill -s KILL -1',
    'kill -- -1',
    'sudo kill -9 -1',
    '/bin/kill -9 -1',
    'pkill -9 -1',
    'killall5',
  ],
  'fork-bomb': [':(){ :|:& };:', 'bomb() { bomb | bomb & }; bomb', 'f(){ f|f & }; f'],
  'chmod-recursive': [
    'chmod -R 777 /',
    'sudo chmod -R 777 /',
    'chmod --recursive 755 /usr',
    'chmod -Rv 777 ~',
  ],
  'chown-recursive': ['chown -R me /', 'sudo chown -R me:me /', 'chown -R me /etc'],
  'system-write': [
    'echo x > /etc/hosts',
    'echo x >> /etc/profile',
    'cat a > /usr/bin/ls',
    'echo x 2> /dev/sda',
    'echo x | sudo tee /etc/hosts',
    'echo x | tee -a /boot/x',
    'cd /etc && echo x > hosts',
  ],
};

for (const [id, commands] of Object.entries(HARD)) {
  test(`hard deny ${id}: ${commands.length} spellings`, () => {
    for (const c of commands) {
      const d = term(c);
      assert.is(d.verdict, 'deny', `${JSON.stringify(c)} → ${d.verdict} (${d.reason})`);
      assert.ok(d.hard, c);
      assert.is(d.rule, `hard: ${id}`, `${JSON.stringify(c)} → ${d.rule}`);
      assert.match(d.reason, /^Refused: /);
    }
  });
}

test('a rule file cannot lift a hard deny, and no mode changes it', () => {
  const open = rules('terminal:\n  - allow: {}\n  - allow: {command: rm}\n"*":\n  - allow: {}\n');
  for (const c of ['rm -rf /', 'sudo reboot', 'kill -9 -1']) {
    const d = term(c, open);
    assert.is(d.verdict, 'deny', c);
    assert.ok(d.hard);
    for (const mode of ['interactive', 'auto', 'strict'] as const)
      assert.is(applyMode(d, mode), 'deny');
  }
  const w = call(
    { tool: 'write_file', path: '/etc/passwd' },
    rules('write_file:\n  - allow: {path: "/etc/**"}\n'),
  );
  assert.is(w.verdict, 'deny');
  assert.ok(w.hard);
});

test('write, edit and delete into system folders are hard denies; harmless devices are fine', () => {
  for (const tool of ['write_file', 'edit_file', 'delete_file']) {
    for (const path of [
      '/etc/hosts',
      '/usr/local/bin/x',
      '/bin/sh',
      '/boot/grub/grub.cfg',
      '/System/x',
      '/proc/sys/kernel/x',
      '/sys/x',
      '/dev/sda',
      '/lib64/x',
      '/sbin/init',
    ]) {
      const d = call({ tool, path });
      assert.is(d.verdict, 'deny', `${tool} ${path}`);
      assert.ok(d.hard);
      assert.is(d.rule, 'hard: system-write');
    }
  }
  assert.is(
    call({ tool: 'write_file', path: '../../../../etc/shadow' }).rule,
    'hard: system-write',
  );
  for (const c of ['echo x > /dev/null', 'make 2>/dev/null', 'cmd >/dev/stderr 2>&1', 'echo x >&2'])
    assert.not.ok(term(c).hard, c);
});

test("killing svc's own processes is refused with a pointer to restart_server", () => {
  for (const c of [
    'kill 4242',
    'kill -9 4243',
    'kill -TERM 4244',
    'kill -9 -4242',
    'kill $PPID',
    'kill -9 ${PPID}',
    'pkill node',
    'pkill -f node',
    'pkill -x node',
    'killall node',
    'killall -9 node',
    'pkill svc',
    'kill $(pgrep -f svc)',
    'kill `pidof node`',
    'pkill -P 4242',
    'sudo killall node',
  ]) {
    const d = term(c);
    assert.is(d.verdict, 'deny', c);
    assert.ok(d.hard);
    assert.is(d.rule, 'hard: svc-kill', c);
    assert.match(d.reason, /restart_server/);
  }
  for (const c of [
    'kill 1234',
    'kill %1',
    'pkill -f vite',
    'pkill -f "node server.js"',
    'killall nginx',
    'kill -l',
    'pkill -1 nginx',
  ]) {
    assert.not.ok(term(c).hard, c);
  }
  assert.match(term('sudo reboot').reason, /restart_server/);
});

test('false positives: words inside arguments are not commands', () => {
  const allowed = [
    'git commit -m "fix shutdown"',
    'echo "rm -rf /"',
    "echo 'reboot now'",
    'grep reboot log.txt',
    'grep -r "kill -9 -1" docs',
    'rm -rf ./build',
    'rm -rf build dist',
    'rm -rf *',
    'ls /usr/bin',
    'cat /etc/hosts',
    'man shutdown',
    'git log --grep=halt',
    'printf "%s\\n" mkfs',
    'ls -la /',
    'du -sh /usr',
    'echo x > /dev/null',
    'find . -name "*.o" -delete',
    'command -v shutdown',
    'type reboot',
    'which halt',
    'kill %1',
    'cat <<EOF\nreboot\nEOF',
    "cat <<'EOF'\n$(reboot)\nEOF",
    'fdisk -l /dev/sda',
    'parted /dev/sda print',
    'dd if=/dev/zero of=./disk.img bs=1M count=10',
    'chmod 755 ./dist',
    'case $x in reboot) echo hi;; esac',
    'echo "$(date) shutdown planned"',
    'for h in halt reboot; do echo $h; done',
    'cmds=(reboot halt); echo ${cmds[0]}',
    'echo rm -rf / > notes.txt',
    'npm run shutdown-test',
    'node scripts/reboot.js',
    'echo ~',
    "python3 -c 'print(1)'",
    'git rm -r --cached dir',
    '[[ $x == reboot ]] && echo yes',
    'cd build && rm -rf *',
    'echo "a; reboot"',
    "awk '/shutdown/ {print}' log",
  ];
  for (const c of allowed) {
    const d = term(c);
    assert.is(d.verdict, 'allow', `${JSON.stringify(c)} → ${d.verdict}: ${d.reason}`);
  }
  assert.is(call({ tool: 'read_file', path: '/etc/hosts' }).verdict, 'allow');
  assert.is(call({ tool: 'read_file', path: '/usr/include/stdio.h' }).verdict, 'allow');
});

test('the parser finds command words through wrappers, nesting and quoting', () => {
  const names = (line: string) =>
    parseShell(line, { home: HOME })
      .commands.map((c) => c.name)
      .filter((n) => n !== '');
  assert.equal(
    names('sudo -u bob env A=1 /usr/bin/nice -n 3 timeout -s KILL 5s stdbuf -oL xargs -n1 ls'),
    ['ls'],
  );
  assert.equal(names('cd x && git push --force origin'), ['cd', 'git']);
  assert.equal(names("a | b || c; d & e\nf && bash -c 'g; h'").sort(), [
    'a',
    'b',
    'bash',
    'c',
    'd',
    'e',
    'f',
    'g',
    'h',
  ]);
  assert.equal(names('echo "$(a "$(b)")" `c`').sort(), ['a', 'b', 'c', 'echo']);
  assert.equal(names('git commit -m "fix shutdown"'), ['git']);
  const rm = parseShell('sudo rm -rf ~/x "$HOME/y"', { home: HOME }).commands[0]!;
  assert.equal(rm.args, ['-rf', '/home/u/x', '/home/u/y']);
  assert.equal(rm.words[rm.wrappers[0]!], 'sudo');
});

test('the default ask list: network and system tools ask, and name the reason', () => {
  const asks = [
    'curl https://example.com',
    'wget https://x.org/f',
    'ssh host',
    'scp a.txt host:/tmp',
    'sftp host',
    'rsync -a a/ host:b',
    'nc -l 8080',
    'ncat host 80',
    'socat - TCP:h:80',
    'nmap 10.0.0.1',
    'telnet host',
    'ftp host',
    'systemctl restart nginx',
    'service nginx restart',
    'crontab -e',
    'launchctl load x.plist',
    'iptables -F',
    'ufw enable',
    'mount /dev/sdb1 /mnt',
    'umount /mnt',
    'useradd bob',
    'usermod -aG docker bob',
    'passwd',
    'chown -R bob dir',
    'chmod -R 777 dir',
    'docker rm -f web',
    'docker rmi img',
    'docker system prune -a',
    'git push --force',
    'git push -f origin main',
    'git push origin main --force',
    'cd x && git push --force origin',
    'sudo ls',
    'sudo -u bob whoami',
    'su - bob',
    'doas ls',
    'ls && curl x',
    'cat ~/.ssh/id_rsa',
    'cat .env',
    'rm -rf ../other',
    'rm -rf "$DIR/"',
    '$EDITOR notes.md',
    'git reset --hard HEAD~3',
    'git clean -fdx',
    '/usr/bin/curl -s x',
  ];
  for (const c of asks) {
    const d = term(c);
    assert.is(d.verdict, 'ask', `${JSON.stringify(c)} → ${d.verdict}: ${d.reason}`);
    assert.not.ok(d.hard);
    assert.ok(d.rule?.startsWith('built-in: '), `${c}: ${d.rule}`);
    assert.ok(d.reason.length > 20);
  }
  for (const c of [
    'npm test',
    'make',
    'git status',
    'git push origin main',
    'docker run --rm alpine',
    'cat .env.example',
    'ls ~/.ssh',
    'cat ~/.ssh/id_rsa.pub',
    'rm -rf /tmp/x',
  ]) {
    assert.is(term(c).verdict, 'allow', c);
  }
});

test('tool defaults: reads and planning allow, writes allow in the working folder and memory, unknown tools ask', () => {
  for (const tool of [
    'read_file',
    'glob',
    'grep',
    'task_create',
    'task_update',
    'task_list',
    'memory_write',
    'memory_search',
    'current_time',
    'update_goal',
    'terminal_output',
    'terminal_stop',
  ]) {
    assert.is(call({ tool }).verdict, 'allow', tool);
  }
  assert.is(call({ tool: 'web_fetch', url: 'https://example.com/x' }).verdict, 'allow');
  assert.is(call({ tool: 'some_mcp_tool' }).verdict, 'ask');
  for (const tool of ['write_file', 'edit_file', 'delete_file']) {
    assert.is(call({ tool, path: 'src/a.ts' }).verdict, 'allow', tool);
    assert.is(call({ tool, path: '/home/u/proj/deep/er/x.md' }).verdict, 'allow');
    assert.is(call({ tool, path: '/home/u/.svc/memory/notes.md' }).verdict, 'allow');
    assert.is(call({ tool, path: '/home/u/other/x.md' }).verdict, 'ask');
    assert.is(call({ tool, path: '/home/u/proj/../other/x.md' }).verdict, 'ask');
    assert.is(call({ tool, path: '/home/u/proj/x', cwd: null }).verdict, 'ask');
    for (const secret of [
      '~/.ssh/config',
      '/home/u/.ssh/authorized_keys',
      '.env',
      'config/.env.production',
      '/home/u/.aws/credentials',
      '/home/u/.svc/access_key',
      '/home/u/.svc/config.yml',
      'keys/id_rsa',
    ]) {
      const d = call({ tool, path: secret });
      assert.is(d.verdict, 'deny', `${tool} ${secret}`);
      assert.not.ok(d.hard);
    }
    assert.is(call({ tool, path: '.env.example' }).verdict, 'allow');
    assert.is(call({ tool, path: '~/.bashrc', cwd: HOME }).verdict, 'ask');
    assert.is(call({ tool, path: '.git/hooks/pre-commit' }).verdict, 'ask');
    for (const planted of [
      '.git/config',
      'sub/.git/config',
      '.git/modules/lib/hooks/post-checkout',
      '.git/modules/lib/config',
      '.git',
      '.husky/pre-commit',
    ])
      assert.is(call({ tool, path: planted }).verdict, 'ask', `${tool} ${planted}`);
    assert.is(call({ tool, path: '.gitignore' }).verdict, 'allow');
    assert.is(call({ tool, path: 'src/git/config.ts' }).verdict, 'allow');
  }
  assert.is(call({ tool: 'read_file', path: '~/.ssh/id_ed25519' }).verdict, 'deny');
  assert.is(call({ tool: 'read_file', path: '~/.ssh/id_ed25519.pub' }).verdict, 'allow');
  assert.is(call({ tool: 'read_file', path: '.env' }).verdict, 'ask');
  assert.is(call({ tool: 'read_file', path: '/home/u/.svc/config.yml' }).verdict, 'ask');
});

test('rules file tiers: deny beats ask beats allow whatever the order', () => {
  const a = rules(`terminal:
  - allow: {command: npm}
  - ask: {command: "npm publish"}
  - deny: {command: "npm publish --tag latest"}
`);
  const b = rules(`terminal:
  - deny: {command: "npm publish --tag latest"}
  - ask: {command: "npm publish"}
  - allow: {command: npm}
`);
  for (const set of [a, b]) {
    assert.is(term('npm test', set).verdict, 'allow');
    assert.is(term('npm publish', set).verdict, 'ask');
    assert.is(term('npm publish --access public --tag latest', set).verdict, 'deny');
    const d = term('cd pkg && npm publish --tag latest', set);
    assert.is(d.verdict, 'deny');
    assert.not.ok(d.hard);
    assert.match(d.rule ?? '', /^permissions\.yml: terminal #\d$/);
  }
});

test('your rules come before the built-ins: lift an ask, tighten an allow, set a default', () => {
  const set = rules(`terminal:
  - allow: {command: curl, host: "*.github.com"}
  - ask: {command: "git push", reason: "I review every push."}
  - default: ask
  - allow: {command: "npm test"}
`);
  assert.is(term('curl https://api.github.com/repos', set).verdict, 'allow');
  assert.is(term('curl https://api.github.com https://evil.example', set).verdict, 'ask');
  assert.is(term('curl https://github.com.evil.example', set).verdict, 'ask');
  const push = term('git push origin main', set);
  assert.is(push.verdict, 'ask');
  assert.is(push.reason, 'I review every push.');
  assert.is(term('npm test -- --watch', set).verdict, 'allow');
  assert.is(term('npm install', set).verdict, 'ask');
  assert.is(
    term('npm test && make', set).verdict,
    'ask',
    'an allow covers its own command, not the ones chained to it',
  );
  assert.is(
    term('ls -la', set).verdict,
    'allow',
    'built-in read-only allow still applies under default: ask',
  );
  assert.is(term('ls > out.txt', set).verdict, 'ask', 'a redirect to a file is not read-only');
  assert.is(term('find . -delete', set).verdict, 'ask');
  assert.is(
    term('sudo npm test', set).verdict,
    'ask',
    'an allow for npm does not cover sudo in front of it',
  );
});

test('path globs: ~, $CWD, **, braces, relative and excluded patterns', () => {
  const set = rules(`write_file:
  - allow: {path: "~/notes/**"}
  - deny: {path: ["$CWD/dist/**", "!$CWD/dist/keep.txt"]}
  - ask: {path: "src/generated/**"}
  - deny: {path: "**/*.{png,jpg}"}
"*":
  - deny: {path: /srv/private/**}
`);
  const w = (path: string) => call({ tool: 'write_file', path }, set).verdict;
  assert.is(w('~/notes/a/b.md'), 'allow');
  assert.is(w('/home/u/notes'), 'allow');
  assert.is(w('~/notesX/a.md'), 'ask');
  assert.is(w('dist/app.js'), 'deny');
  assert.is(w('dist/keep.txt'), 'allow');
  assert.is(w('src/generated/x.ts'), 'ask');
  assert.is(w('src/x.ts'), 'allow');
  assert.is(w('img/a.png'), 'deny');
  assert.is(w('/srv/private/x'), 'deny');
  assert.is(call({ tool: 'read_file', path: '/srv/private/x' }, set).verdict, 'deny');
  assert.is(term('cat /srv/private/x', set).verdict, 'deny');
  assert.is(term('cp a.txt /srv/private/', set).verdict, 'deny');
  assert.is(term('echo hi > /srv/private/log', set).verdict, 'deny');
});

test('hosts: *.example.com globs for web_fetch', () => {
  const set = rules(`web_fetch:
  - deny: {host: "*.example.com"}
  - ask: {host: [intranet, "docs-*.acme.io"]}
`);
  const f = (url: string) => call({ tool: 'web_fetch', url }, set).verdict;
  assert.is(f('https://a.b.example.com/x'), 'deny');
  assert.is(f('http://API.Example.com./'), 'deny');
  assert.is(f('https://example.com/'), 'allow');
  assert.is(f('https://notexample.com/'), 'allow');
  assert.is(f('intranet/page'), 'ask');
  assert.is(f('https://docs-v2.acme.io/'), 'ask');
  assert.is(f('https://x.docs-v2.acme.io/'), 'allow');
});

test('a broken rules file keeps the defaults and reports the problem', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-perm-'));
  try {
    const file = join(dir, 'permissions.yml');
    const cases: [string, RegExp][] = [
      ['terminal:\n  - allow: {command: "x"\n', /not valid YAML/],
      ['terminal:\n  - allow: {comand: curl}\n', /terminal #1: unknown key "comand"/],
      [
        'terminal:\n  - allow: {command: curl}\n    deny: {command: wget}\n',
        /exactly one of allow, ask, deny or default/,
      ],
      ['terminal:\n  - allow:\n', /write `allow: \{\}`/],
      ['terminal:\n  allow: {command: curl}\n', /must be a list of rules/],
      ['- allow: {}\n', /top level/],
      ['terminal:\n  - default: sometimes\n', /default must be allow, ask or deny/],
      ['web_fetch:\n  - deny: {host: 3}\n', /web_fetch #1/],
    ];
    for (const [text, problem] of cases) {
      writeFileSync(file, text);
      const r = loadRules(file);
      assert.ok(r.problem, text);
      assert.match(r.problem ?? '', problem);
      assert.is(r.rules.rules.size, 0, 'no rule of a broken file is used');
      assert.is(term('curl https://x.org', r.rules).verdict, 'ask', 'defaults still apply');
      assert.is(term('rm -rf /', r.rules).verdict, 'deny');
    }
    const good = rules('terminal:\n  - allow: {command: curl}\n');
    writeFileSync(file, 'terminal: [\n');
    const kept = loadRules(file, good);
    assert.ok(kept.problem);
    assert.is(kept.rules, good, 'the last good rules are kept when given');
    assert.equal(loadRules(join(dir, 'missing.yml')), { rules: emptyRules() });
    writeFileSync(file, '');
    assert.is(loadRules(file).problem, undefined);
    if (process.getuid?.() !== 0) {
      writeFileSync(file, 'terminal: []\n');
      chmodSync(file, 0o000);
      assert.match(loadRules(file).problem ?? '', /cannot read/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the three modes: interactive asks, auto allows asks, strict denies them', () => {
  const ask = term('curl https://x.org');
  const allow = term('ls');
  const deny = call({ tool: 'write_file', path: '.env' });
  assert.equal(
    ['interactive', 'auto', 'strict'].map((m) => applyMode(ask, m as 'interactive')),
    ['ask', 'allow', 'deny'],
  );
  for (const m of ['interactive', 'auto', 'strict'] as const) {
    assert.is(applyMode(allow, m), 'allow');
    assert.is(applyMode(deny, m), 'deny');
  }
  const explicit = term('curl https://x.org', rules('terminal:\n  - deny: {command: curl}\n'));
  assert.is(applyMode(explicit, 'auto'), 'deny', 'an explicit deny is not changed by auto');
});

test('restart_server always asks: auto does not allow it, strict denies, rules cannot allow it', () => {
  const d = call({ tool: 'restart_server' });
  assert.is(d.verdict, 'ask');
  assert.ok(d.askAlways);
  assert.is(applyMode(d, 'interactive'), 'ask');
  assert.is(applyMode(d, 'auto'), 'ask');
  assert.is(applyMode(d, 'strict'), 'deny');
  const lifted = call(
    { tool: 'restart_server' },
    rules('restart_server:\n  - allow: {}\n"*":\n  - default: allow\n'),
  );
  assert.is(lifted.verdict, 'ask');
  assert.is(applyMode(lifted, 'auto'), 'ask');
  const denied = call({ tool: 'restart_server' }, rules('restart_server:\n  - deny: {}\n'));
  assert.is(denied.verdict, 'deny');
});

test("review findings: svc's own rules, store and control files, tilde and brace spellings, /proc environments, svc --stop", () => {
  const env = { home: '/home/u', svcHome: '/home/u/.svc', svcPids: [4242], sandboxed: true };
  const verdict = (command: string) =>
    evaluate({ tool: 'terminal', command, cwd: '/home/u/proj' }, emptyRules(), env);
  for (const c of [
    'printf x > ~/.svc/permissions.yml',
    'cp /tmp/p.yml $SVC_HOME/permissions.yml',
    'echo x >> $SVC_HOME/permissions.yml',
    'sqlite3 ~/.svc/svc.db "update sessions set permission_mode=1"',
    'rm ~/.svc/svc.db',
    'cat /proc/$PPID/environ',
    'cat /proc/1/environ',
  ]) {
    assert.is(verdict(c).verdict, 'ask', c);
  }
  for (const c of ['rm -rf {~,/tmp/x}', 'rm -rf ~u', 'rm -rf ~root', 'rm -rf ~-'])
    assert.is.not(verdict(c).verdict, 'allow', c);
  for (const c of [
    'npx svc serve --stop',
    'svc serve --stop',
    'node bin/svc.js serve --stop',
    'pkill -f main.js',
  ]) {
    const d = verdict(c);
    assert.is(d.verdict, 'deny', c);
    assert.ok(d.hard, c);
    assert.match(d.reason, /restart_server/, c);
  }
  for (const c of ['svc status', 'ls -la', 'rm -rf ./build', 'cat notes/~draft.txt'])
    assert.is(verdict(c).verdict, 'allow', c);
  for (const path of ['/home/u/.svc/permissions.yml', '/home/u/.svc/svc.db']) {
    assert.is(
      evaluate({ tool: 'write_file', path, cwd: '/home/u/.svc' }, emptyRules(), env).verdict,
      'deny',
      path,
    );
  }
});

test.run();
