import { fork, type ChildProcess } from 'node:child_process';
import { codePath } from '../shared/code-root.js';
import { withoutNpm } from '../shared/npm-env.js';
import { roleSpecs, type ChildRoleName } from './roles.js';

export type { ChildRoleName } from './roles.js';

/*
 * Starting a child process, kept free of heavy imports: `svc serve` forks the gateway before it
 * loads the supervisor's own modules, so the two load side by side (half the cold start).
 */

/** The environment a child gets: ours, its role, and never the access key (commands inherit it). */
export function childEnv(role: ChildRoleName, home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...withoutNpm(process.env), SVC_HOME: home, SVC_ROLE: role };
  delete env.SVC_ACCESS_KEY;
  return env;
}

/** A forked child whose early messages are kept until someone listens (Node drops unheard ones). */
export interface Forked {
  proc: ChildProcess;
  /** Stops buffering and hands over what arrived so far. */
  takeBuffered(): unknown[];
}

export function forkChild(role: ChildRoleName, home: string): Forked {
  // stderr is piped: the supervisor writes it to logs/<role>.log
  return forkEntry(
    codePath(roleSpecs[role].entry),
    childEnv(role, home),
    'pipe',
    roleSpecs[role].v8Flags,
  );
}

/** Forks any entry file with svc's child settings (tests use it for their own peers). */
export function forkEntry(
  entry: string,
  env: NodeJS.ProcessEnv,
  stderr: 'pipe' | 'inherit' = 'inherit',
  v8Flags: readonly string[] = [],
): Forked {
  const proc = fork(entry, [], {
    env,
    stdio: ['ignore', 'inherit', stderr, 'ipc'],
    serialization: 'json',
    execArgv: [...v8Flags],
  });
  const buffered: unknown[] = [];
  const hold = (m: unknown) => buffered.push(m);
  proc.on('message', hold);
  proc.on('error', () => {}); // a fork that cannot start reports here; 'exit' follows
  return {
    proc,
    takeBuffered: () => {
      proc.off('message', hold);
      return buffered.splice(0);
    },
  };
}
