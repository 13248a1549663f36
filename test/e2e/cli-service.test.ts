import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import plist from 'plist';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  removeHome,
  runCli,
  startServer,
  svcBin,
  tmpHome,
  type RunningServer,
} from '../helpers/server.js';

/*
 * `svc service` through the real CLI. This machine runs no service manager, so the files are
 * checked with --print and written into a temp config folder (XDG_CONFIG_HOME / HOME). With no
 * systemctl on PATH the command must say so cleanly; with a stand-in systemctl (a shell script
 * that records its arguments, as the real one cannot run here) it must issue the right calls.
 */

interface Setup {
  home: string;
  config: string;
  bin: string;
  env: NodeJS.ProcessEnv;
}

function setup(homeName = 'svc home'): Setup {
  const root = tmpHome('svc-service-');
  const home = join(root, homeName);
  const config = join(root, 'xdg');
  const bin = join(root, 'bin');
  mkdirSync(bin);
  // PATH has only an empty folder (node runs by absolute path): no systemctl, no loginctl
  return {
    home,
    config,
    bin,
    env: { SVC_HOME: home, XDG_CONFIG_HOME: config, HOME: root, PATH: bin },
  };
}

const unitPath = (s: Setup) => join(s.config, 'systemd', 'user', 'svc.service');

test('--print shows the systemd unit for this Node, this install, SVC_HOME and the address, and writes nothing', async () => {
  const s = setup();
  try {
    const r = await runCli(
      ['service', 'install', '--print', '--manager', 'systemd', '--addr', ':8088'],
      s.env,
    );
    assert.is(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      `ExecStart=${process.execPath} --max-semi-space-size=1 ${svcBin} serve --addr :8088\n`,
      "the supervisor's 1 MB young generation (issue 37)",
    );
    assert.match(r.stdout, `Environment="SVC_HOME=${s.home}"\n`, 'a path with a space is quoted');
    assert.match(r.stdout, `Environment=PATH=${s.bin}\n`);
    assert.match(r.stdout, /^Restart=on-failure$/m);
    assert.match(r.stdout, /^KillMode=mixed$/m, 'the supervisor stops its own children');
    assert.match(r.stdout, /^WantedBy=default\.target$/m);
    assert.is(existsSync(s.config), false, 'nothing written');
    const help = await runCli(['service', '--help'], s.env);
    assert.match(help.stdout, /Examples\n[\s\S]*\$ svc service install/);
  } finally {
    removeHome(join(s.home, '..'));
  }
});

test('--print --manager launchd shows a plist that launchd can read', async () => {
  const s = setup();
  try {
    const r = await runCli(['service', 'install', '--print', '--manager', 'launchd'], s.env);
    assert.is(r.code, 0, r.stderr);
    const doc = plist.parse(r.stdout) as Record<string, any>;
    assert.is(doc.Label, 'dev.svc.serve');
    assert.equal(doc.ProgramArguments, [
      process.execPath,
      '--max-semi-space-size=1',
      svcBin,
      'serve',
      '--addr',
      '127.0.0.1:8088',
    ]);
    assert.is(doc.EnvironmentVariables.SVC_HOME, s.home);
    assert.is(doc.RunAtLoad, true);
    assert.equal(doc.KeepAlive, { SuccessfulExit: false });
    assert.is(doc.StandardErrorPath, join(s.home, 'logs', 'serve.log'));
    assert.is(existsSync(join(s.home, '..', 'Library')), false, 'nothing written');
  } finally {
    removeHome(join(s.home, '..'));
  }
});

test('install without a service manager writes the unit and says it was not started; status reads it; uninstall keeps the data', async () => {
  const s = setup('odd $home 100%');
  try {
    mkdirSync(s.home, { recursive: true, mode: 0o700 });
    writeFileSync(join(s.home, 'config.yml'), 'log:\n  level: info\n', { mode: 0o600 });
    const r = await runCli(
      ['service', 'install', '--manager', 'systemd', '--addr', '127.0.0.1:9123'],
      s.env,
    );
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, `Wrote ${unitPath(s)}`);
    assert.match(
      r.stdout,
      /Not started: systemctl is not installed\. Where a systemd user manager runs, start it with: systemctl --user daemon-reload && systemctl --user enable --now svc\.service/,
    );
    const unit = readFileSync(unitPath(s), 'utf8');
    assert.match(
      unit,
      'Environment="SVC_HOME=' + s.home.replace(/%/g, '%%') + '"',
      'systemd specifiers escaped',
    );
    assert.match(unit, 'serve --addr 127.0.0.1:9123');

    const status = await runCli(['service', 'status', '--json', '--manager', 'systemd'], s.env);
    assert.is(status.code, 0, status.stderr);
    const st = JSON.parse(status.stdout);
    assert.is(st.installed, true);
    assert.equal(
      st.runs,
      { node: process.execPath, bin: svcBin, home: s.home, addr: '127.0.0.1:9123' },
      'the unit reads back exactly, escapes undone',
    );
    assert.is(st.matches_this_install, true);
    assert.is(st.active, null);
    assert.match(st.manager_note, 'systemctl is not installed');

    const doctor = await runCli(['doctor', '--json'], s.env, 60_000);
    const service = JSON.parse(doctor.stdout).checks.find(
      (c: { id: string }) => c.id === 'service',
    );
    assert.is(service.status, 'warn', 'an unknown state is a warn, not a failure');
    assert.match(
      service.message,
      /installed, but its state is unknown: systemctl is not installed/,
    );

    const un = await runCli(['service', 'uninstall', '--manager', 'systemd'], s.env);
    assert.is(un.code, 0, un.stderr);
    assert.match(un.stdout, `Removed ${unitPath(s)}; your data in ${s.home} is kept`);
    assert.is(existsSync(unitPath(s)), false);
    assert.ok(readdirSync(s.home).includes('config.yml'), 'the data stays');
    const again = await runCli(['service', 'status', '--manager', 'systemd'], s.env);
    assert.is(again.code, 3);
    assert.match(again.stdout, 'No svc service is installed');
  } finally {
    removeHome(join(s.home, '..'));
  }
});

test('with a (stand-in) systemctl: install reloads, enables and starts; status asks it; linger off is explained', async () => {
  const s = setup();
  const calls = join(s.bin, 'calls.log');
  try {
    writeFileSync(
      join(s.bin, 'systemctl'),
      `#!/bin/sh\necho "systemctl $*" >> '${calls}'\ncase "$2" in is-active) echo active;; is-enabled) echo enabled;; esac\nexit 0\n`,
    );
    writeFileSync(
      join(s.bin, 'loginctl'),
      `#!/bin/sh\necho "loginctl $*" >> '${calls}'\necho no\n`,
    );
    chmodSync(join(s.bin, 'systemctl'), 0o755);
    chmodSync(join(s.bin, 'loginctl'), 0o755);
    const r = await runCli(['service', 'install', '--manager', 'systemd'], {
      ...s.env,
      PATH: `${s.bin}:/bin:/usr/bin`,
    });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, 'Enabled and started');
    assert.match(r.stdout, /Linger is off for \S+: .*sudo loginctl enable-linger/);
    const issued = readFileSync(calls, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('systemctl'));
    assert.equal(issued, [
      'systemctl --user daemon-reload',
      'systemctl --user enable --now svc.service',
    ]);

    const st = JSON.parse(
      (
        await runCli(['service', 'status', '--json', '--manager', 'systemd'], {
          ...s.env,
          PATH: `${s.bin}:/bin:/usr/bin`,
        })
      ).stdout,
    );
    assert.is(st.active, 'active');
    assert.is(st.enabled, 'enabled');
    assert.is(st.linger, 'no');

    writeFileSync(calls, '');
    const un = await runCli(['service', 'uninstall', '--manager', 'systemd'], {
      ...s.env,
      PATH: `${s.bin}:/bin:/usr/bin`,
    });
    assert.is(un.code, 0, un.stderr);
    assert.match(un.stdout, 'Stopped and disabled');
    assert.equal(readFileSync(calls, 'utf8').trim().split('\n'), [
      'systemctl --user disable --now svc.service',
      'systemctl --user daemon-reload',
    ]);
  } finally {
    removeHome(join(s.home, '..'));
  }
});

test("run through npx: the unit and every process svc starts carry none of npm's variables or PATH entries", async () => {
  const s = setup();
  const npx = join(s.home, '..', '.npm', '_npx', '1a2b3c', 'node_modules', '.bin');
  const gyp = '/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin';
  const npmEnv = {
    npm_config_cache: join(s.home, '..', '.npm'),
    npm_lifecycle_event: 'npx',
    npm_execpath: '/usr/lib/node_modules/npm/bin/npm-cli.js',
    PATH: [npx, gyp, s.bin].join(':'),
  };
  let server: RunningServer | undefined;
  try {
    const r = await runCli(['service', 'install', '--print', '--manager', 'systemd'], {
      ...s.env,
      ...npmEnv,
    });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, `Environment=PATH=${s.bin}\n`);
    assert.not.match(r.stdout, /npm|_npx|node-gyp/);
    server = await startServer({
      home: s.home,
      env: { ...npmEnv, PATH: `${npmEnv.PATH}:${process.env.PATH}` },
    });
    const status = JSON.parse((await runCli(['status', '--json'], { SVC_HOME: s.home })).stdout);
    // Its children (the supervisor is the process npx started: its cleaned env is what it passes on).
    const pids = (status.processes as { role: string; pid: number }[])
      .filter((p) => p.role !== 'supervisor')
      .map((p) => p.pid);
    assert.ok(pids.length > 0);
    for (const pid of pids) {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      assert.equal(
        environ.filter((v) => /^npm_/i.test(v)),
        [],
        `pid ${pid}`,
      );
      const path = environ.find((v) => v.startsWith('PATH=')) ?? '';
      assert.not.match(path, /_npx|node-gyp-bin/, `pid ${pid}: ${path}`);
    }
  } finally {
    await server?.stop();
    removeHome(join(s.home, '..'));
  }
});

test('bad arguments are refused with one line', async () => {
  const s = setup();
  try {
    for (const [args, text] of [
      [['service', 'frob'], 'unknown service action "frob"'],
      [['service', 'install', '--addr', 'nope', '--print'], '--addr: address "nope" needs a port'],
      [
        ['service', 'install', '--manager', 'upstart', '--print'],
        '--manager is systemd or launchd',
      ],
    ] as const) {
      const r = await runCli([...args], s.env);
      assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, text);
      assert.is(r.stderr.trim().split('\n').length, 1);
    }
  } finally {
    removeHome(join(s.home, '..'));
  }
});

test.run();
