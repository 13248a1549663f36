import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { z } from 'zod';
import {
  getBackground,
  MAX_RUNNING,
  runningCount,
  startBackground,
  stopBackground,
} from './background.js';
import { LiveOutput } from './live-output.js';
import { OutputLog, outputFile, RESULT_CAP } from './output-log.js';
import {
  prepareLaunch,
  refusalNote,
  wallHint,
  type Launch,
  type SandboxOptions,
} from '../../sandbox/index.js';
import { defineTool, type Tool, type ToolContext } from '../registry.js';
import { commandEnv, loadShell, spawnShell, type ShellExit } from './shell-process.js';

export const DEFAULT_TIMEOUT_S = 120;
export const MAX_TIMEOUT_S = 600;

export interface TerminalOptions {
  /** Values no command may see in its environment (provider API keys); a function is read per call. */
  secrets?: readonly string[] | (() => readonly string[]);
  /** Run commands in the OS sandbox (the agent worker always passes this; without it they run as they are). */
  sandbox?: SandboxOptions;
}

const terminalArgs = z
  .object({
    command: z.string().min(1, 'the command must not be empty').max(100_000),
    timeout_seconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_TIMEOUT_S, `at most ${MAX_TIMEOUT_S} seconds; for longer work use background: true`)
      .optional()
      .describe(
        `Default ${DEFAULT_TIMEOUT_S}, at most ${MAX_TIMEOUT_S}. Ignored in background mode.`,
      ),
    background: z
      .boolean()
      .optional()
      .describe(
        'Start it and return at once with an id; read it with terminal_output, stop it with terminal_stop.',
      ),
    outside_sandbox: z
      .string()
      .trim()
      .min(1, 'say what the command must reach outside the sandbox and why')
      .max(500)
      .optional()
      .describe(
        'Only when the command must reach beyond the sandbox (write outside the working folder, temp and caches, read a hidden folder, use a network the session does not have): why. The user is asked first; strict sessions and scheduled or channel turns refuse.',
      ),
  })
  .strict();

function workDir(ctx: ToolContext): string | undefined {
  const dir = ctx.workingDir ?? homedir();
  try {
    return statSync(dir).isDirectory() ? dir : undefined;
  } catch {
    return undefined;
  }
}

function exitLine(exit: ShellExit): string {
  if (exit.exitCode !== null) return `[exit code ${exit.exitCode}]`;
  return `[ended by signal ${exit.signal ?? 'unknown'}]`;
}

/** `terminal`: one shell command in its own process group, with a timeout and live output. */
export function terminalTool(opts: TerminalOptions = {}): Tool {
  const secrets = () =>
    typeof opts.secrets === 'function' ? opts.secrets() : (opts.secrets ?? []);
  return defineTool({
    name: 'terminal',
    purpose: 'Runs a shell command (tests, builds, git…) inside the sandbox and shows its output.',
    description:
      `Runs a shell command (bash -c, or sh where bash is missing) in the session's working folder with stdin closed; stdout and stderr are merged. ` +
      `Times out after timeout_seconds (default ${DEFAULT_TIMEOUT_S}, max ${MAX_TIMEOUT_S}), and then it and everything it started are stopped. ` +
      `Output over ${RESULT_CAP} characters is saved to a file and you get its head and tail. ` +
      'Processes a command leaves running are stopped when it ends; for servers and long jobs use background: true. ' +
      "Commands run in a sandbox where the OS allows one: they can write only the working folder, a private /tmp and package caches, cannot see svc's home or key folders, and get the session's network: on (public hosts through svc's proxy: HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are set; loopback, private addresses and unix sockets outside are out of reach unless the user's rules name them), off, or a host list through the same proxy.",
    args: terminalArgs,
    subject: ({ command, outside_sandbox }) => ({
      command,
      ...(outside_sandbox !== undefined ? { outside: outside_sandbox } : {}),
    }),
    run: async ({ command, timeout_seconds, background, outside_sandbox }, ctx) => {
      await loadShell();
      const cwd = workDir(ctx);
      if (!cwd)
        return {
          output: `The working folder ${ctx.workingDir ?? homedir()} does not exist or is not a folder.`,
          isError: true,
        };
      if (ctx.signal.aborted)
        return { output: 'Not run: the turn was interrupted.', isError: true };
      const plainEnv = commandEnv(secrets());
      const launch: Launch | undefined = opts.sandbox
        ? await prepareLaunch(opts.sandbox, ctx, cwd, plainEnv, outside_sandbox)
        : undefined;
      if (launch?.kind === 'refused') return { output: launch.reason, isError: true };
      const sandboxed = launch?.kind === 'sandboxed' ? launch : undefined;
      const env = sandboxed?.env ?? plainEnv;
      const prefix = sandboxed?.prefix;
      const close = () => sandboxed?.close();
      if (background) {
        if (runningCount() >= MAX_RUNNING) {
          close();
          return {
            output: `There are already ${MAX_RUNNING} background commands running; stop one with terminal_stop first.`,
            isError: true,
          };
        }
        const p = startBackground({
          sessionId: ctx.sessionId,
          command,
          cwd,
          env,
          svcHome: ctx.paths.home,
          prefix,
          extraStdio: sandboxed?.stdio,
          attach: sandboxed?.attach,
          onEnd: close,
        });
        if (p.run.pid === undefined) {
          const exit = await p.run.done;
          return {
            output: `The command could not be started: ${exit.spawnError ?? 'unknown error'}`,
            isError: true,
          };
        }
        return {
          output: `Started in the background as ${p.id} (pid ${p.run.pid}) in ${cwd}. Read its output with terminal_output {"id": "${p.id}"}; stop it with terminal_stop.`,
        };
      }
      const timeout = timeout_seconds ?? DEFAULT_TIMEOUT_S;
      const log = new OutputLog(() => outputFile(ctx.paths.home, ctx.sessionId, ctx.callId));
      const live = new LiveOutput(ctx.emit);
      const run = spawnShell({
        command,
        cwd,
        env,
        log,
        onChunk: live.push,
        prefix,
        extraStdio: sandboxed?.stdio,
        attach: sandboxed?.attach,
        contained: sandboxed !== undefined,
      });
      let ended: 'timeout' | 'interrupted' | undefined;
      const stopFor = (why: 'timeout' | 'interrupted') => {
        ended ??= why;
        void run.stop();
      };
      const timer = setTimeout(() => stopFor('timeout'), timeout * 1000);
      const onAbort = () => stopFor('interrupted');
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      let exit: ShellExit;
      try {
        exit = await run.done;
      } finally {
        clearTimeout(timer);
        ctx.signal.removeEventListener('abort', onAbort);
        live.flush();
        log.close();
        close();
      }
      if (exit.spawnError)
        return { output: `The command could not be started: ${exit.spawnError}`, isError: true };
      const text = log.total === 0 ? '(no output)' : log.summary();
      const parts = [text.endsWith('\n') ? text.slice(0, -1) : text, exitLine(exit)];
      if (ended === 'timeout')
        parts.push(
          `[timed out after ${timeout} s: the command and every process it started were stopped; the output so far is above. For longer work use background: true.]`,
        );
      if (ended === 'interrupted')
        parts.push(
          '[interrupted: the turn was stopped, and so were the command and every process it started.]',
        );
      if (exit.leftovers && !ended)
        parts.push(
          '[the command left processes running; they were stopped. Use background: true to keep something running.]',
        );
      if (launch?.kind === 'plain' && launch.outside)
        parts.push('[ran outside the sandbox, as approved]');
      // A refusal the program already printed (an HTTP client shows the proxy's 403) is not repeated.
      const refused = refusalNote((sandboxed?.refusals() ?? []).filter((r) => !text.includes(r)));
      if (refused) parts.push(refused);
      const hint =
        sandboxed && exit.exitCode !== 0 && !ended
          ? wallHint(`${text}\n${refused ?? ''}`, ctx.origin, sandboxed.network)
          : undefined;
      if (hint) parts.push(hint);
      return { output: parts.join('\n'), isError: ended !== undefined };
    },
  });
}

/** `terminal_output`: what a background command printed so far, and whether it still runs. */
export function terminalOutputTool(): Tool {
  return defineTool({
    name: 'terminal_output',
    purpose: 'Reads more output from a command that is still running in the background.',
    description: `Reads a background command's output from since_offset on (default 0; pass next_offset from the previous read to get only what is new), up to ${RESULT_CAP} characters, and says whether it is still running or its exit code.`,
    args: z
      .object({ id: z.string().min(1).max(64), since_offset: z.number().int().min(0).optional() })
      .strict(),
    run: ({ id, since_offset }, ctx) => {
      const p = getBackground(id, ctx.sessionId);
      if (!p)
        return { output: `There is no background command ${id} in this session.`, isError: true };
      const r = p.log.read(since_offset ?? 0);
      const status = p.exit === undefined ? 'running' : p.stopped ? 'stopped' : 'exited';
      const state = {
        id: p.id,
        status,
        exit_code: p.exit?.exitCode ?? null,
        signal: p.exit?.signal ?? null,
        total_chars: p.log.total,
        from_offset: r.from,
        next_offset: r.next,
      };
      const notes: string[] = [];
      if ((since_offset ?? 0) < r.from)
        notes.push(
          `[output before offset ${r.from} is no longer in memory${p.log.file ? `; it is in ${p.log.file}` : ''}]`,
        );
      if (r.next < p.log.total)
        notes.push(`[more output follows: call again with since_offset ${r.next}]`);
      return {
        output: `${JSON.stringify(state)}\n${notes.join('\n')}${notes.length ? '\n' : ''}${r.text}`,
      };
    },
  });
}

/** `terminal_stop`: stops a background command and everything it started. */
export function terminalStopTool(): Tool {
  return defineTool({
    name: 'terminal_stop',
    purpose: 'Stops a command that runs in the background.',
    description:
      'Stops a background command started with terminal (background: true), together with every process it started.',
    args: z.object({ id: z.string().min(1).max(64) }).strict(),
    run: async ({ id }, ctx) => {
      const p = getBackground(id, ctx.sessionId);
      if (!p)
        return { output: `There is no background command ${id} in this session.`, isError: true };
      if (p.exit !== undefined) return { output: `${id} already ended ${exitLine(p.exit)}.` };
      const exit = await stopBackground(p);
      return { output: `Stopped ${id} ${exitLine(exit)}.` };
    },
  });
}

/** The three shell tools. */
export function terminalTools(opts: TerminalOptions = {}): Tool[] {
  return [terminalTool(opts), terminalOutputTool(), terminalStopTool()];
}
