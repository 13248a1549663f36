import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM, CHROMIUM_ARGS } from './browser.js';
import { waitFor } from './server.js';

/**
 * A Chromium started by the test with --remote-debugging-port, the way a user starts their own
 * for svc to connect to. It runs in its own process group, killed at stop and, should the test
 * process end first, at its exit: no orphan across runs.
 */
export interface DebugChromium {
  pid: number;
  port: number;
  profile: string;
  stop: () => Promise<void>;
}

const groups = new Set<number>();
process.on('exit', () => {
  for (const g of groups) killGroup(g, 'SIGKILL');
});

function killGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // gone
  }
}

export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat); // a zombie is gone for our purposes
  } catch {
    return false;
  }
};

/** Pids whose command line mentions `needle` (a profile folder): what an orphan check looks for. */
export function pidsMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(needle) && alive(Number(d)))
        out.push(Number(d));
    } catch {
      // raced with its exit
    }
  }
  return out;
}

export async function startDebugChromium(url = 'about:blank'): Promise<DebugChromium> {
  const profile = mkdtempSync(join(tmpdir(), 'svc-browser-wt-chromium-'));
  const proc = spawn(
    CHROMIUM,
    [...CHROMIUM_ARGS, `--user-data-dir=${profile}`, '--remote-debugging-port=0', url],
    { detached: true, stdio: 'ignore' },
  );
  const pid = proc.pid!;
  groups.add(pid);
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const stop = async () => {
    killGroup(pid, 'SIGTERM');
    await exited;
    killGroup(pid, 'SIGKILL');
    await waitFor(
      () => pidsMentioning(profile).length === 0,
      10_000,
      'the test Chromium to be gone',
    );
    groups.delete(pid);
    rmSync(profile, { recursive: true, force: true });
  };
  try {
    const port = await waitFor(
      () =>
        Number(readFileSync(join(profile, 'DevToolsActivePort'), 'utf8').split('\n')[0]) ||
        undefined,
      30_000,
      'Chromium to write DevToolsActivePort',
    );
    return { pid, port, profile, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A page the browser tests act on: a name field, a size select, a Send button that greets. */
export const TEST_PAGE = `<!doctype html><html><head><title>Greeter</title></head><body>
<h1>Greeter</h1>
<label>Your name <input id="name" name="name"></label>
<label>Size <select id="size"><option value="s">Small</option><option value="l">Large</option></select></label>
<button id="send" onclick="document.getElementById('out').textContent = 'Hello, ' + document.getElementById('name').value + ' (' + document.getElementById('size').value + ')!'">Send</button>
<p id="out"></p>
<a href="/second">Second page</a>
</body></html>`;

export async function startTestSite(): Promise<{
  base: string;
  server: Server;
  close: () => Promise<void>;
}> {
  const server = createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (req.url === '/second')
      return res.end('<!doctype html><title>Second</title><p>The second page</p>');
    res.end(TEST_PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    base: `http://127.0.0.1:${port}`,
    server,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
