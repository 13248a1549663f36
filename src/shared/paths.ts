import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Every file svc keeps lives under one folder; this names each of them. */
export interface Paths {
  home: string;
  config: string;
  accessKey: string;
  serveEnv: string;
  db: string;
  runDir: string;
  controlSocket: string;
  pidFile: string;
  logsDir: string;
  serveLog: string;
  uploadsDir: string;
  trashDir: string;
  soul: string;
  user: string;
  memoryDir: string;
  permissions: string;
  auditLog: string;
}

export function resolvePaths(env: NodeJS.ProcessEnv = process.env): Paths {
  const home = resolve(
    env.SVC_HOME && env.SVC_HOME.length > 0 ? env.SVC_HOME : join(homedir(), '.svc'),
  );
  const runDir = join(home, 'run');
  const logsDir = join(home, 'logs');
  return {
    home,
    config: join(home, 'config.yml'),
    accessKey: join(home, 'access_key'),
    serveEnv: join(home, 'serve.env'),
    db: join(home, 'svc.db'),
    runDir,
    controlSocket: join(runDir, 'supervisor.sock'),
    pidFile: join(runDir, 'svc.pid'),
    logsDir,
    serveLog: join(logsDir, 'serve.log'),
    uploadsDir: join(home, 'uploads'),
    trashDir: join(home, 'trash'),
    soul: join(home, 'soul.md'),
    user: join(home, 'user.md'),
    memoryDir: join(home, 'memory'),
    permissions: join(home, 'permissions.yml'),
    auditLog: join(logsDir, 'audit.log'),
  };
}

/** Where the OAuth tokens and client registration of a remote MCP server are kept (0600). */
export function mcpOAuthFile(home: string, name: string): string {
  return join(home, 'mcp-oauth', `${name}.json`);
}
