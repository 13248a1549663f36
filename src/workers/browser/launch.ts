import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Where svc looks for a Chromium to start under `launch: auto`, in order. */
const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Launched {
  pid: number;
  port: number;
  /** Ends the browser (SIGTERM, then SIGKILL of its process group). */
  stop: () => Promise<void>;
  exited: Promise<void>;
}

export function findBrowser(configured?: string): string | null {
  if (configured !== undefined) return existsSync(configured) ? configured : null;
  return CANDIDATES.find((c) => existsSync(c)) ?? null;
}

/**
 * Starts a headless Chromium with its own profile under `profileDir`, on a DevTools port the
 * browser picks (--remote-debugging-port=0), and answers once it wrote that port to
 * DevToolsActivePort. It runs in a process group of its own, which `onGroup` is told about so the
 * supervisor can kill it even if this worker is killed outright.
 */
export async function launchChromium(
  executable: string,
  profileDir: string,
  onGroup: (pgid: number | null) => void,
  timeoutMs = 30_000,
): Promise<Launched> {
  mkdirSync(profileDir, { recursive: true, mode: 0o700 });
  const portFile = join(profileDir, 'DevToolsActivePort');
  rmSync(portFile, { force: true });
  const proc: ChildProcess = spawn(
    executable,
    [
      ...FLAGS,
      `--user-data-dir=${profileDir}`,
      '--remote-debugging-port=0',
      '--remote-debugging-address=127.0.0.1',
      'about:blank',
    ],
    { detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const pid = proc.pid;
  if (pid === undefined) throw new Error(`${executable} could not be started`);
  onGroup(pid);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => {
    gone = true;
    onGroup(null);
  });
  const killGroup = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      // already gone
    }
  };
  const stop = async () => {
    if (gone) return;
    killGroup('SIGTERM');
    const timer = setTimeout(() => killGroup('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
    killGroup('SIGKILL'); // helpers (zygote, renderers) that outlived the browser
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gone)
      throw new Error(
        `${executable} exited at start: ${stderr.trim().split('\n').slice(-3).join(' ') || 'no output'}`,
      );
    const port = readPort(portFile);
    if (port !== null) return { pid, port, stop, exited };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `${executable} did not open its DevTools port within ${Math.round(timeoutMs / 1000)} s`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function readPort(file: string): number | null {
  try {
    const first = readFileSync(file, 'utf8').split('\n')[0] ?? '';
    const port = Number(first);
    return Number.isInteger(port) && port > 0 ? port : null;
  } catch {
    return null;
  }
}
