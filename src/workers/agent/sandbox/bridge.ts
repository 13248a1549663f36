import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';

/**
 * Runs inside a sandbox without network (`node bridge.js <proxy socket> <program> <args…>`): a
 * loopback port in the sandbox's own network namespace is relayed to svc's proxy socket, the
 * usual proxy variables point at it, and then the command runs. Its exit status is passed on.
 * Imports nothing of svc: it starts in a fresh node inside the sandbox.
 */
const [socket, program, ...args] = process.argv.slice(2);
if (!socket || !program) {
  process.stderr.write('usage: bridge.js <proxy socket> <program> [args…]\n');
  process.exit(2);
}

const server = createServer((client) => {
  const up = connect(socket);
  client.pipe(up);
  up.pipe(client);
  client.on('error', () => up.destroy());
  up.on('error', () => client.destroy());
});

server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NO_PROXY;
  delete env.no_proxy;
  for (const k of [
    'HTTP_PROXY',
    'HTTPS_PROXY',
    'http_proxy',
    'https_proxy',
    'npm_config_proxy',
    'npm_config_https_proxy',
  ])
    env[k] = url;
  const child = spawn(program, args, { stdio: 'inherit', env });
  child.on('error', (err) => {
    process.stderr.write(`${program}: ${err.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    server.close();
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
});
// The relay must not keep the sandbox alive once the command is gone.
server.unref();
