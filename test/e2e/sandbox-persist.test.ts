import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { connectWs, startRig, status, type TurnRig, type WsClient } from '../helpers/turns.js';

/**
 * What a sandboxed command may leave behind for later, through the real `svc serve` and real
 * bubblewrap: nothing that runs outside the sandbox at the person's next git command (hooks,
 * config, the .git folder itself), while everyday git work in the working folder still runs.
 */

let rig: TurnRig;
let root = '';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_PAGER: 'cat' } });

function repo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test');
  git(dir, 'config', 'user.email', 'test@example.com');
}

interface Chat {
  id: string;
  ws: WsClient;
}

async function newChat(work: string): Promise<Chat> {
  const res = await api(rig.port, 'POST', '/api/sessions', {
    working_dir: work,
    permission_mode: 'auto',
  });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return { id: res.body.id, ws: await connectWs(rig.port, [`session:${res.body.id}`]) };
}

let calls = 0;
/** Runs one tool call (a terminal command by default) in a turn; answers its result as the model got it. */
async function run(
  chat: Chat,
  command: string,
  tool: { name: string; args: Record<string, unknown> } = { name: 'terminal', args: { command } },
): Promise<string> {
  const id = `p${++calls}`;
  rig.fake.enqueue(
    {
      parts: [{ toolCall: { id, name: tool.name, arguments: [JSON.stringify(tool.args)] } }],
      stop: 'tool_use',
    },
    textReply('done'),
  );
  const started = await api(rig.port, 'POST', `/api/chat/${chat.id}/turn?wait=false`, {
    message: 'go',
    attachments: [],
  });
  assert.is(started.status, 202, JSON.stringify(started.body));
  const result = await chat.ws.waitEvent(
    (e) => e.type === 'turn.tool_result' && e.data.call_id === id,
    `the result of ${id}`,
    30_000,
  );
  await chat.ws.waitEvent(
    (e) => e.data?.turn_id === started.body.turn_id && e.type === 'turn.completed',
    'the end of the turn',
    30_000,
  );
  assert.not.ok(
    chat.ws.events.some((e) => e.type === 'approval.requested'),
    'nothing asked (stepping outside would)',
  );
  return String(result.data.output);
}

const setup = async () => {
  root = mkdtempSync('/var/tmp/svc-sandbox-persist-');
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
};

const sandboxState = async () => (await status(rig.port)).sandbox?.state;

test.before(setup);
test.after(async () => {
  await rig?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

test('a sandboxed script cannot plant git hooks or config, nor swap .git; add, commit, checkout -b still work', async () => {
  assert.is(await sandboxState(), 'on', 'these tests need bubblewrap');
  const work = join(root, 'work');
  repo(work);
  repo(join(work, 'sub'));
  writeFileSync(join(work, 'a.txt'), 'a\n');
  // A script, so the permission engine cannot see what it does: the sandbox alone must hold.
  writeFileSync(
    join(work, 'plant.sh'),
    [
      'try() { if sh -c "$1" 2>/dev/null; then echo "$2: written"; else echo "$2: refused"; fi; }',
      `try 'printf "#!/bin/sh\\ntouch /var/tmp/pwned\\n" > .git/hooks/pre-commit' hook`,
      `try 'echo "[core] fsmonitor = touch pwned" >> .git/config' config`,
      `try 'git config core.hooksPath planted' git-config`,
      `try 'rm -rf .git/hooks' rm-hooks`,
      `try 'mv .git .git-old' mv-git`,
      `try 'echo x > sub/.git/hooks/post-checkout' sub-hook`,
      'git add a.txt && git commit -qm x && git checkout -qb y && echo "branch: $(git branch --show-current)"',
      '',
    ].join('\n'),
  );
  const chat = await newChat(work);
  try {
    const out = await run(chat, 'sh plant.sh');
    assert.is(
      out,
      [
        'hook: refused',
        'config: refused',
        'git-config: refused',
        'rm-hooks: refused',
        'mv-git: refused',
        'sub-hook: refused',
        'branch: y',
        '[exit code 0]',
      ].join('\n'),
    );
    assert.not.ok(existsSync(join(work, '.git', 'hooks', 'pre-commit')));
    assert.not.ok(existsSync(join(work, 'sub', '.git', 'hooks', 'post-checkout')));
    assert.not.ok(existsSync(join(work, '.git-old')));
    const config = readFileSync(join(work, '.git', 'config'), 'utf8');
    assert.not.match(config, /fsmonitor|hooksPath/);
    assert.is(git(work, 'log', '--format=%s', 'y').trim(), 'x');
    assert.is(git(work, 'branch', '--show-current').trim(), 'y');
  } finally {
    chat.ws.close();
  }
});

/** docs/skills-and-workflows.md's example skill, with its script, put in $SVC_HOME/skills by hand. */
function skill(name: string, files: Record<string, string>): string {
  const dir = join(rig.server.home, 'skills', name);
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    `---\nname: ${name}\ndescription: Reports the weather in a fixed format. Use when the user asks for the weather.\n---\nWhen asked for the weather, run \`scripts/fetch.sh <city>\` and answer in the format of\n\`templates/report.md\`.\n`,
  );
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text, { mode: 0o755 });
  }
  return dir;
}

test("an enabled skill's script runs inside the sandbox from its stable path, read-only; disabled and leaking skills and the rest of svc's home stay hidden", async () => {
  const fetch = '#!/bin/sh\necho "weather in $1: sunny"\n';
  skill('weather-report', { 'scripts/fetch.sh': fetch, 'templates/report.md': '# {city}\n' });
  skill('secret-skill', { 'scripts/fetch.sh': fetch });
  const leaky = skill('leaky', {});
  symlinkSync('/etc/hostname', join(leaky, 'notes'));
  const off = await api(rig.port, 'PATCH', '/api/skills/secret-skill/toggle', { enabled: false });
  assert.is(off.status, 200, JSON.stringify(off.body));
  const work = join(root, 'skills-work');
  mkdirSync(work);
  writeFileSync(
    join(work, 'check.sh'),
    [
      'try() { if sh -c "$1" 2>/dev/null; then echo "$2: written"; else echo "$2: refused"; fi; }',
      'try \'echo "echo planted" > /tmp/svc-skills/weather-report/scripts/fetch.sh\' script',
      "try 'touch /tmp/svc-skills/weather-report/new' new-file",
      "try 'rm -rf /tmp/svc-skills/weather-report' remove",
      "echo \"skills: $(ls /tmp/svc-skills | tr '\\n' ' ')\"",
      `echo "home: $(ls -A ${rig.server.home} | tr '\\n' ' ')"`,
      '',
    ].join('\n'),
  );
  const chat = await newChat(work);
  try {
    const loaded = await run(chat, '', { name: 'skill', args: { name: 'weather-report' } });
    assert.match(loaded, '/tmp/svc-skills/weather-report (read-only)');
    // The script, as its SKILL.md says, from the folder the skill tool named.
    const ran = await run(chat, '/tmp/svc-skills/weather-report/scripts/fetch.sh Paris');
    assert.is(ran, 'weather in Paris: sunny\n[exit code 0]');
    const walls = (await run(chat, 'sh check.sh')).split('\n');
    assert.equal(walls.slice(0, 3), ['script: refused', 'new-file: refused', 'remove: refused']);
    const shown = walls[3]!.replace('skills: ', '').trim().split(' ');
    assert.ok(shown.includes('weather-report'), walls[3]);
    assert.not.ok(shown.includes('secret-skill'), `a disabled skill is not shown: ${walls[3]}`);
    assert.not.ok(shown.includes('leaky'), `a skill with a link out is not shown: ${walls[3]}`);
    assert.is(walls[4], 'home: ', "nothing of svc's home is visible");
    assert.is(
      readFileSync(
        join(rig.server.home, 'skills', 'weather-report', 'scripts', 'fetch.sh'),
        'utf8',
      ),
      fetch,
    );
  } finally {
    chat.ws.close();
  }
});

test.run();
