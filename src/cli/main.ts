import { mkdirSync } from 'node:fs';
import sade from 'sade';
import { isLoopbackBind, parseListenAddr } from '../shared/net/addr.js';
import { resolvePaths } from '../shared/paths.js';
import { version } from '../shared/version.js';
import { listFlag, normalizeArgv, stringFlag, UsageError } from './argv.js';
import { loadServeEnv } from '../shared/config/serve-env.js';
import { forkChild } from '../supervisor/spawn-child.js';

/** Every failure the CLI reports is one line on stderr and a non-zero exit. */
function die(message: string, code = 1): never {
  process.stderr.write(`svc: ${message}\n`);
  process.exit(code);
}

const unknown = (flag: string): never => die(`unknown option ${flag}; see "svc --help"`, 2);
const commands = new Set(['serve', 'status', 'version']);

const argv = normalizeArgv(process.argv);
const command = argv[2];
if (command !== undefined && !command.startsWith('-') && !commands.has(command)) die(`unknown command "${command}"; the commands are serve, status and version`, 2);

const prog = sade('svc').version(version).describe('A personal agent server: one REST + WebSocket API and a Web UI. Data lives in $SVC_HOME (default ~/.svc).');

prog
  .command('serve')
  .describe('Start the server: supervisor, gateway and workers.')
  .option('--addr', 'Listen address; ":8088" means every interface (also -addr)', '127.0.0.1:8088')
  .option('--access-key', 'Access key for non-local clients (else SVC_ACCESS_KEY, config.yml, or a generated one)')
  .option('--cors', 'An origin allowed to call the API from a browser (repeatable)')
  .option('-d, --daemon', 'Run in the background, logging to $SVC_HOME/logs/serve.log')
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
        console.log(pid === undefined ? `svc is not running (${paths.home})` : `svc stopped${pid > 0 ? ` (pid ${pid})` : ''}`);
        return;
      }
      const addrGiven = argv.some((a) => a === '--addr' || a.startsWith('--addr='));
      const addr = addrGiven ? stringFlag(opts.addr, 'addr') : undefined;
      if (addr !== undefined) parseListenAddr(addr);
      const flags = { addr, accessKey: stringFlag(opts['access-key'], 'access-key'), cors: listFlag(opts.cors, 'cors') };
      if (opts.daemon) {
        const [{ startDaemon }, { openUrl }] = await Promise.all([import('./daemon.js'), import('./serve.js')]);
        const forward = argv.slice(3).filter((a) => a !== '-d' && a !== '--daemon');
        const started = await startDaemon(paths, forward);
        console.log(`svc is running in the background (pid ${started.pid}) at ${started.url ?? '?'}; logs in ${paths.serveLog}`);
        const listen = parseListenAddr(addr ?? '127.0.0.1:8088');
        if (started.url && !isLoopbackBind(listen)) console.log(`Open ${openUrl(listen, Number(new URL(started.url).port), started.key)}`);
        return;
      }
      // serve.env first (children inherit it), then the gateway's fork, which loads its modules
      // while this process loads the supervisor's: the two halves of a cold start overlap.
      const env = loadServeEnv(paths.serveEnv);
      mkdirSync(paths.home, { recursive: true, mode: 0o700 });
      const gateway = forkChild('gateway', paths.home);
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
  .action(async (opts: Record<string, unknown>) => {
    const paths = resolvePaths();
    const { fetchStatus, formatStatus } = await import('./status.js');
    const status = await fetchStatus(paths).catch((err: Error) => die(`cannot read the server status: ${err.message}`));
    if (!status) {
      if (opts.json) console.log(JSON.stringify({ running: false, home: paths.home }));
      die(`svc is not running (${paths.home})`, 3);
    }
    // `running`: the supervisor answers; `serving`: a gateway takes requests.
    console.log(opts.json ? JSON.stringify({ running: true, serving: status.state !== 'degraded', ...status }, null, 2) : formatStatus(status));
  });

prog
  .command('version')
  .describe('Print the version.')
  .action(() => console.log(`svc ${version}`));

prog.parse(argv, { unknown });
