import { chmodSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { z } from 'zod';

/** Commands `svc status`, `svc serve --stop`, `svc serve -d` and `svc key` send over run/supervisor.sock. */
export const controlRequest = z.object({
  cmd: z.enum(['status', 'stop', 'open_url', 'restart', 'replace']),
});
export type ControlRequest = z.infer<typeof controlRequest>;

export type ControlHandler = (req: ControlRequest) => Promise<unknown>;

/** Serves one JSON request per line on a 0600 Unix socket. */
export async function serveControl(path: string, handler: ControlHandler): Promise<Server> {
  rmSync(path, { force: true });
  const server = createServer((sock) => {
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('error', () => {});
    sock.on('data', (chunk: string) => {
      buf += chunk;
      if (buf.length > 64 * 1024) return sock.destroy();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let parsed: ControlRequest;
        try {
          parsed = controlRequest.parse(JSON.parse(line));
        } catch {
          sock.write(JSON.stringify({ ok: false, error: 'unknown control request' }) + '\n');
          continue;
        }
        handler(parsed).then(
          (result) => sock.write(JSON.stringify({ ok: true, result }) + '\n'),
          (err: Error) => sock.write(JSON.stringify({ ok: false, error: err.message }) + '\n'),
        );
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // umask-independent: created 0600 before anyone can connect is not guaranteed, so chmod at once
    server.listen(path, () => {
      chmodSync(path, 0o600);
      resolve();
    });
  });
  return server;
}

/** Sends one control request; rejects with ENOENT/ECONNREFUSED when no supervisor listens. */
export function askControl(path: string, req: ControlRequest, timeoutMs = 5000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const sock = createConnection(path);
    let buf = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(
        Object.assign(new Error('the supervisor did not answer in time'), { code: 'ETIMEDOUT' }),
      );
    }, timeoutMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(JSON.stringify(req) + '\n'));
    sock.on('data', (chunk: string) => {
      buf += chunk;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      sock.end();
      try {
        const reply = z
          .object({ ok: z.boolean(), result: z.unknown().optional(), error: z.string().optional() })
          .parse(JSON.parse(buf.slice(0, nl)));
        if (reply.ok) resolve(reply.result);
        else reject(new Error(reply.error ?? 'the supervisor refused the request'));
      } catch (err) {
        reject(err as Error);
      }
    });
    sock.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
