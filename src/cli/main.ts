import { mkdirSync } from 'node:fs';
import sade from 'sade';
import { isLoopbackBind, parseListenAddr } from '../shared/net/addr.js';
import { resolvePaths } from '../shared/paths.js';
import { version } from '../shared/version.js';
import { listFlag, normalizeArgv, stringFlag, UsageError } from './argv.js';
import { unknownAction, unknownCommand, unknownOption } from './suggest.js';
import { loadServeEnv } from '../shared/config/serve-env.js';
import { stripNpm } from '../shared/npm-env.js';
import { forkChild } from '../supervisor/spawn-child.js';
import { takeEarlyGateway } from './early-gateway.js';

/** Every failure the CLI reports is one line on stderr and a non-zero exit. */
function die(message: string, code = 1): never {
  process.stderr.write(`svc: ${message}\n`);
  process.exit(code);
}

const commands = new Set([
  'serve',
  'status',
  'doctor',
  'logs',
  'key',
  'service',
  'version',
  'upgrade',
  'backup',
]);

/** Commands that take an action word, and the actions each takes. */
const actions: Record<string, readonly string[]> = {
  key: ['show', 'rotate'],
  service: ['install', 'uninstall', 'status'],
  backup: ['create', 'verify', 'restore'],
};

// Run through npx or npm run: npm's variables and PATH entries are not passed on (npm-env.ts).
stripNpm();
const argv = normalizeArgv(process.argv);
const command = argv[2];
if (command !== undefined && !command.startsWith('-') && !commands.has(command))
  die(unknownCommand(command, [...commands]), 2);
const actionList = command !== undefined && Object.hasOwn(actions, command) && actions[command];
const helpAsked = argv.some((a) => a === '--help' || a === '-h');
if (actionList && !helpAsked && (argv[3] === undefined || argv[3].startsWith('-')))
  die(
    `"svc ${command}" needs an action: ${actionList.map((a) => `svc ${command} ${a}`).join(', ')}`,
    2,
  );
// `svc upgrade --version X` names a release; sade would read any --version as "print the version"
let upgradeTo: string | undefined;
if (command === 'upgrade') {
  const at = argv.findIndex((a) => a === '--version' || a.startsWith('--version='));
  if (at >= 0) {
    const given = argv[at]!.includes('=') ? argv[at]!.slice('--version='.length) : argv[at + 1];
    if (given === undefined || given === '' || given.startsWith('-'))
      die('--version needs a release version, e.g. --version 0.2.0', 2);
    upgradeTo = given;
    argv.splice(at, argv[at]!.includes('=') ? 1 : 2);
  }
}

const prog = sade('svc')
  .version(version)
  .describe(
    'A personal agent server: one REST + WebSocket API and a Web UI. Data lives in $SVC_HOME (default ~/.svc).',
  );

prog
  .command('serve')
  .describe('Start the server: supervisor, gateway and workers.')
  .option('--addr', 'Listen address; ":8088" means every interface (also -addr)', '127.0.0.1:8088')
  .option(
    '--access-key',
    'Access key for non-local clients (else SVC_ACCESS_KEY, config.yml, or a generated one)',
  )
  .option('--cors', 'An origin allowed to call the API from a browser (repeatable)')
  .option(
    '-d, --daemon',
    'Run in the background (logs: "svc logs"; console output in $SVC_HOME/logs/serve.log)',
  )
  .option('--stop', 'Stop the server running in the background')
  .example('serve')
  .example('serve -addr :8088')
  .example('serve -d && svc status')
  .action(async (opts: Record<string, unknown>) => {
    const paths = resolvePaths();
    try {
      if (opts.stop) {
        const { stopDaemon } = await import('./daemon.js');
        const pid = await stopDaemon(paths);
        console.log(
          pid === undefined
            ? `svc is not running (${paths.home})`
            : `svc stopped${pid > 0 ? ` (pid ${pid})` : ''}`,
        );
        return;
      }
      const addrGiven = argv.some((a) => a === '--addr' || a.startsWith('--addr='));
      const addr = addrGiven ? stringFlag(opts.addr, 'addr') : undefined;
      if (addr !== undefined) parseListenAddr(addr);
      const flags = {
        addr,
        accessKey: stringFlag(opts['access-key'], 'access-key'),
        cors: listFlag(opts.cors, 'cors'),
      };
      if (opts.daemon) {
        const [{ startDaemon }, { openUrl }] = await Promise.all([
          import('./daemon.js'),
          import('./serve.js'),
        ]);
        const forward = argv.slice(3).filter((a) => a !== '-d' && a !== '--daemon');
        const started = await startDaemon(paths, forward);
        console.log(
          `svc is running in the background (pid ${started.pid}) at ${started.url ?? '?'}; "svc logs" shows its logs`,
        );
        const listen = parseListenAddr(addr ?? '127.0.0.1:8088');
        if (started.url && !isLoopbackBind(listen))
          console.log(`Open ${openUrl(listen, Number(new URL(started.url).port), started.key)}`);
        return;
      }
      // serve.env first (children inherit it), then the gateway's fork (done by the launcher when
      // it could: early-gateway.ts), which loads its modules while this process loads the
      // supervisor's: the two halves of a cold start overlap.
      const env = loadServeEnv(paths.serveEnv);
      mkdirSync(paths.home, { recursive: true, mode: 0o700 });
      const gateway = takeEarlyGateway() ?? forkChild('gateway', paths.home);
      const { serveForeground } = await import('./serve.js');
      await serveForeground(paths, flags, env.bad, gateway);
    } catch (err) {
      die((err as Error).message, err instanceof UsageError ? 2 : 1);
    }
  });

prog
  .command('status')
  .describe('Show the running server and its processes.')
  .option('--json', 'Print JSON for scripts')
  .example('status')
  .example('status --json')
  .action(async (opts: Record<string, unknown>) => {
    const paths = resolvePaths();
    const { fetchStatus, formatStatus } = await import('./status.js');
    const status = await fetchStatus(paths).catch((err: Error) =>
      die(`cannot read the server status: ${err.message}`),
    );
    if (!status) {
      if (opts.json) console.log(JSON.stringify({ running: false, home: paths.home }));
      die(`svc is not running (${paths.home})`, 3);
    }
    // `running`: the supervisor answers; `serving`: a gateway takes requests.
    console.log(
      opts.json
        ? JSON.stringify(
            { running: true, serving: status.state !== 'degraded', ...status },
            null,
            2,
          )
        : formatStatus(status),
    );
  });

prog
  .command('doctor')
  .describe(
    'Check this install and say what is wrong and how to fix it: one line per check (ok, warn or fail). Exits 1 when a check fails.',
  )
  .option(
    '--fix',
    'Repair what is safe to repair (file modes, a stale pid file) and say what was done',
  )
  .option('--json', 'Print JSON for scripts')
  .option('--timeout', 'Seconds each model may take to answer', 5)
  .example('doctor')
  .example('doctor --fix')
  .example('doctor --json | jq ".checks[] | select(.status != \\"ok\\")"')
  .action(async (opts: Record<string, unknown>) => {
    try {
      const seconds = Number(opts.timeout);
      if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 120)
        throw new UsageError('--timeout takes a number of seconds from 1 to 120');
      const { doctor, formatReport } = await import('./doctor.js');
      const report = await doctor(resolvePaths(), {
        fix: opts.fix === true,
        modelTimeoutMs: seconds * 1000,
      });
      console.log(opts.json ? JSON.stringify(report, null, 2) : formatReport(report));
      process.exitCode = report.ok ? 0 : 1;
    } catch (err) {
      die((err as Error).message, err instanceof UsageError ? 2 : 1);
    }
  });

prog
  .command('logs')
  .describe(
    'Print the recent log lines of every svc process (supervisor, gateway, agent, …), oldest first.',
  )
  .option('-f, --follow', 'Keep printing lines as they are written')
  .option('--process', 'Only this process: supervisor, gateway, agent, … (repeatable)')
  .option('--since', 'Only lines since a time: 30s, 10m, 2h, 1d, or a date and time')
  .option('-n, --lines', 'How many lines at most', 200)
  .option('--json', 'One JSON object a line: time, level, process, message')
  .example('logs')
  .example('logs --since 10m --process gateway')
  .example('logs -f --json')
  .action(async (opts: Record<string, unknown>) => {
    try {
      const { follow, formatLine, parseSince, recentLines } = await import('./logs.js');
      const paths = resolvePaths();
      const since = stringFlag(opts.since, 'since');
      const lines = Number(opts.lines);
      if (!Number.isInteger(lines) || lines < 1)
        throw new UsageError('--lines takes a whole number of at least 1');
      const o = {
        processes: listFlag(opts.process, 'process'),
        since: since === undefined ? undefined : parseSince(since),
        lines,
        json: opts.json === true,
      };
      const recent = recentLines(paths.logsDir, o);
      for (const l of recent) console.log(formatLine(l, o.json));
      if (!opts.follow) {
        if (recent.length === 0 && !o.json)
          process.stderr.write(
            `svc: no log lines${since ? ` since ${since}` : ''} in ${paths.logsDir}\n`,
          );
        return;
      }
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      await follow(paths.logsDir, o, (l) => console.log(formatLine(l, o.json)), stop.signal);
    } catch (err) {
      die((err as Error).message, err instanceof UsageError ? 2 : 1);
    }
  });

prog
  .command('key <action>')
  .describe(
    'The access key: "show" prints it with the address that signs the Web UI in; "rotate" writes a new one and restarts svc (through the drain) so the old key is refused.',
  )
  .option('--json', 'Print JSON for scripts')
  .example('key show')
  .example('key rotate')
  .action(async (action: string, opts: Record<string, unknown>) => {
    try {
      if (!actions.key!.includes(action))
        throw new UsageError(unknownAction('key', action, actions.key!));
      const { describeSource, readKey, rotateKey } = await import('./key.js');
      const paths = resolvePaths();
      const view = action === 'show' ? await readKey(paths) : await rotateKey(paths, 120_000);
      if (opts.json) {
        console.log(
          JSON.stringify(
            { key: view.key, source: view.source, url: view.url, running: view.running },
            null,
            2,
          ),
        );
        return;
      }
      if (action === 'rotate')
        console.log(
          view.running
            ? 'A new access key is in use: svc restarted, and the old key is refused from now on.'
            : 'A new access key is written; svc uses it when it starts.',
        );
      console.log(`Access key (from ${describeSource(view.source, paths)}): ${view.key}`);
      console.log(`Sign-in address: ${view.url}`);
    } catch (err) {
      die((err as Error).message, err instanceof UsageError ? 2 : 1);
    }
  });

prog
  .command('service <action>')
  .describe(
    'Run svc under the service manager (a systemd user service on Linux, a launchd agent on macOS): install, uninstall or status. Uninstall keeps your data.',
  )
  .option('--addr', 'Listen address the service uses', '127.0.0.1:8088')
  .option('--print', 'Print the service file instead of writing it')
  .option('--start', 'Enable and start it (--no-start only writes the file)', true)
  .option('--manager', "systemd or launchd (default: this system's)")
  .option('--json', 'Print JSON for scripts (status)')
  .example('service install')
  .example('service install --addr :8088 --print')
  .example('service status')
  .example('service uninstall')
  .action(async (action: string, opts: Record<string, unknown>) => {
    try {
      if (!actions.service!.includes(action))
        throw new UsageError(unknownAction('service', action, actions.service!));
      const [service, files] = await Promise.all([
        import('./service.js'),
        import('./service-files.js'),
      ]);
      const paths = resolvePaths();
      const managerFlag = stringFlag(opts.manager, 'manager');
      if (managerFlag !== undefined && managerFlag !== 'systemd' && managerFlag !== 'launchd')
        throw new UsageError('--manager is systemd or launchd');
      const manager = managerFlag ?? files.defaultManager();
      if (!manager)
        throw new Error(
          `svc has no service manager support on ${process.platform}; use "svc serve -d"`,
        );
      if (action === 'status') {
        const state = await service.inspectService(paths, manager);
        console.log(
          opts.json ? JSON.stringify(state, null, 2) : service.formatServiceState(state).join('\n'),
        );
        process.exitCode = state.installed ? 0 : 3;
        return;
      }
      if (action === 'uninstall') {
        for (const line of await service.uninstallService(paths, manager)) console.log(line);
        return;
      }
      const addr = stringFlag(opts.addr, 'addr') ?? '127.0.0.1:8088';
      try {
        parseListenAddr(addr);
      } catch (err) {
        throw new UsageError(`--addr: ${(err as Error).message}`);
      }
      const spec = service.thisInstall(paths, addr);
      if (opts.print) {
        process.stdout.write(files.renderService(manager, spec));
        return;
      }
      for (const line of await service.installService(paths, manager, spec, opts.start !== false))
        console.log(line);
    } catch (err) {
      die((err as Error).message, err instanceof UsageError ? 2 : 1);
    }
  });

prog
  .command('upgrade')
  .describe(
    "Install a newer release: downloads it over https, verifies its SHA-256 against the release's checksums.txt, makes it the active version and restarts a running svc into it (rolling back by itself if it does not come up). Exit codes: 0 done or up to date, 1 failure, 2 bad usage.",
  )
  .option('--check', 'Print the current and the latest version; change nothing')
  .option('-y, --yes', 'Install without asking')
  .option('--version', 'Install this release (e.g. 0.2.0) instead of the latest')
  .option('--rollback', 'Return to the previous version (kept by the last upgrade)')
  .option('--json', 'One JSON object a line (progress), for scripts')
  .example('upgrade --check')
  .example('upgrade')
  .example('upgrade --yes --version 0.2.0')
  .example('upgrade --rollback')
  .action(async (opts: Record<string, unknown>) => {
    try {
      const { upgrade } = await import('./upgrade.js');
      const flags = {
        check: opts.check === true,
        yes: opts.yes === true,
        rollback: opts.rollback === true,
        json: opts.json === true,
        version: upgradeTo,
      };
      process.exitCode = await upgrade(resolvePaths(), flags);
    } catch (err) {
      if (opts.json && !(err instanceof UsageError))
        console.log(JSON.stringify({ stage: 'failed', message: (err as Error).message }));
      die((err as Error).message, err instanceof UsageError ? 2 : 1);
    }
  });

prog
  .command('backup <action> [file]')
  .describe(
    'Back up everything svc keeps (a consistent snapshot of svc.db, settings, skills, memory, sign-ins, uploads) into one archive, check one, or restore one into an empty home. Exit codes: 0 done, 1 failure or a damaged backup, 2 bad usage.',
  )
  .option('--to', 'create: the folder to write into (default $SVC_HOME/backups)')
  .option('--uploads', 'create: include uploaded files (--no-uploads leaves them out)', true)
  .option('--encrypt', 'create: encrypt with a passphrase (age format)')
  .option('--recipient', 'create: encrypt to this age public key instead (repeatable)')
  .option('--passphrase-file', 'Read the passphrase from the first line of this file')
  .option('--identity', 'verify/restore: an age identity file that opens the backup (repeatable)')
  .option('--home', 'restore: the home to restore into (default $SVC_HOME)')
  .option('--force', 'restore: move a non-empty home aside instead of refusing')
  .option('--json', 'One JSON object, for scripts')
  .example('backup create')
  .example('backup create --to /mnt/usb --encrypt')
  .example('backup verify ~/.svc/backups/svc-backup-20261127-030000.zip')
  .example('backup restore svc-backup-20261127-030000.zip --home ~/.svc-new')
  .action(async (action: string, file: string | undefined, opts: Record<string, unknown>) => {
    try {
      if (!actions.backup!.includes(action))
        throw new UsageError(unknownAction('backup', action, actions.backup!));
      if (action !== 'create' && file === undefined)
        throw new UsageError(
          `svc backup ${action} needs the backup file: svc backup ${action} FILE`,
        );
      const home = stringFlag(opts.home, 'home');
      const to = stringFlag(opts.to, 'to');
      const passphraseFile = stringFlag(opts['passphrase-file'], 'passphrase-file');
      const flags = {
        ...(to !== undefined ? { to } : {}),
        ...(home !== undefined ? { home } : {}),
        ...(passphraseFile !== undefined ? { passphraseFile } : {}),
        uploads: opts.uploads !== false,
        encrypt: opts.encrypt === true,
        recipients: listFlag(opts.recipient, 'recipient'),
        identityFiles: listFlag(opts.identity, 'identity'),
        force: opts.force === true,
        json: opts.json === true,
      };
      const cli = await import('./backup.js');
      const paths = resolvePaths();
      if (action === 'create') await cli.backupCreate(paths, flags);
      else if (action === 'verify')
        process.exitCode = (await cli.backupVerify(file!, flags)) ? 0 : 1;
      else await cli.backupRestore(paths, file!, flags);
    } catch (err) {
      die((err as Error).message, err instanceof UsageError ? 2 : 1);
    }
  });

prog
  .command('version')
  .describe('Print the version.')
  .example('version')
  .action(() => console.log(`svc ${version}`));

/** The long flags a command declared (sade keeps them in its tree, which its types leave out). */
function flagsOf(name: string): string[] {
  const tree: unknown = Reflect.get(prog, 'tree');
  const entry = tree && typeof tree === 'object' ? Reflect.get(tree, name) : undefined;
  const options: unknown = entry && typeof entry === 'object' ? Reflect.get(entry, 'options') : [];
  if (!Array.isArray(options)) return [];
  return options.flatMap((o: unknown) =>
    Array.isArray(o) && typeof o[0] === 'string' ? (o[0].match(/--[a-z][a-z-]*/g) ?? []) : [],
  );
}

const named = command !== undefined && commands.has(command) ? command : undefined;
const unknown = (flag: string): never =>
  die(unknownOption(flag, [...flagsOf(named ?? '__all__'), '--help', '--version'], named), 2);

// A bare `svc` is a question, not a mistake: the short help, exit 0.
if (argv.length === 2) prog.help();
else if (named === undefined && !helpAsked && !argv.includes('--version') && !argv.includes('-v'))
  die(unknownOption(argv[2] ?? '', ['--help', '--version']), 2);
else prog.parse(argv, { unknown });
