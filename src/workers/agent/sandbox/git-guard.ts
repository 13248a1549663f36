import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { inside } from './bwrap.js';

/*
 * What a sandboxed command must not plant in a git repository for later: hooks and config (hooks,
 * core.fsmonitor, core.hooksPath, aliases) run with the person's full rights at their next git
 * command, outside any sandbox. Those paths are mounted read-only over themselves; the rest of
 * .git (index, objects, refs, logs) stays writable, so commit, checkout, add and branch work.
 */

export interface GitGuard {
  /** .git folders bound onto themselves: a mount point cannot be renamed or removed, so the command cannot swap in a .git of its own. */
  pin: string[];
  /** Read-only over themselves: hooks, config, `.git` files, a hooksPath folder. */
  readOnly: string[];
}

/** Folders the scan below the working folder skips: big, and no repository of the person's own. */
const SKIP = new Set(['node_modules', '.cache', '.npm', 'vendor', 'target', 'dist', 'build']);
/** How deep below the working folder repositories are looked for, and at most how many folders. */
const DEPTH = 2;
const MAX_DIRS = 400;

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

const isDir = (p: string) => {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** The working folder, its parents inside a writable root, and its subfolders a little way down. */
function candidates(cwd: string, writable: readonly string[]): string[] {
  const out: string[] = [];
  for (let d = cwd; writable.some((w) => inside(d, w)); d = dirname(d)) {
    out.push(d);
    if (dirname(d) === d) break;
  }
  let level = [cwd];
  let seen = 0;
  for (let depth = 0; depth < DEPTH && seen < MAX_DIRS; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        if (name.startsWith('.') || SKIP.has(name) || ++seen > MAX_DIRS) continue;
        const p = join(dir, name);
        if (isDir(p)) next.push(p);
      }
    }
    out.push(...next);
    level = next;
  }
  return out;
}

/** `core.hooksPath` of a config file, if it sets one (a plain reading: the last value wins). */
function hooksPath(config: string): string | undefined {
  let text = '';
  try {
    text = readFileSync(config, 'utf8');
  } catch {
    return undefined;
  }
  let section = '';
  let found: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const head = /^\[\s*([A-Za-z0-9.-]+)/.exec(line);
    if (head) section = head[1]!.toLowerCase();
    const kv = /^hookspath\s*=\s*(.*)$/i.exec(line);
    if (section === 'core' && kv) found = kv[1]!.replace(/^"(.*)"$/, '$1').trim();
  }
  return found || undefined;
}

/** The git dir a `.git` file points to (`gitdir: …`), resolved from the folder holding it. */
function gitdirOf(dotGit: string): string | undefined {
  try {
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'));
    return m ? resolve(dirname(dotGit), m[1]!) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The hooks, config and `.git` entries of the repositories a sandboxed command could write: in the
 * working folder, its parents inside a writable root, and two levels below it (worktrees and
 * submodules through their `.git` files and `.git/modules`). A missing hooks folder is created
 * empty first, so the command cannot create one.
 */
export function gitGuard(cwd: string, writable: readonly string[]): GitGuard {
  const roots = writable.map((w) => real(w)).filter((w): w is string => w !== undefined);
  const start = real(cwd);
  if (!start) return { pin: [], readOnly: [] };
  const writableHere = (p: string) => roots.some((w) => inside(p, w));
  const pin = new Set<string>();
  const readOnly = new Set<string>();
  const guardGitDir = (gitDir: string, worktree: string) => {
    if (!writableHere(gitDir) || pin.has(gitDir)) return;
    pin.add(gitDir);
    const hooks = join(gitDir, 'hooks');
    if (!existsSync(hooks)) {
      try {
        mkdirSync(hooks);
      } catch {
        // unwritable here too: then nothing inside can create it either
      }
    }
    for (const f of ['hooks', 'config', 'config.worktree'])
      if (existsSync(join(gitDir, f))) readOnly.add(join(gitDir, f));
    const common = join(gitDir, 'commondir');
    if (existsSync(common)) {
      try {
        const dir = resolve(gitDir, readFileSync(common, 'utf8').trim());
        if (dir !== gitDir) guardGitDir(dir, worktree);
      } catch {
        // an unreadable commondir: git cannot use it either
      }
    }
    for (const sub of ['modules', 'worktrees']) {
      const base = join(gitDir, sub);
      if (!isDir(base)) continue;
      for (const name of readdirSync(base)) {
        const d = join(base, name);
        if (isDir(d) && existsSync(join(d, sub === 'modules' ? 'config' : 'gitdir')))
          for (const f of ['hooks', 'config', 'config.worktree'])
            if (existsSync(join(d, f))) readOnly.add(join(d, f));
      }
    }
    const hp = hooksPath(join(gitDir, 'config'));
    if (hp) {
      const target = real(isAbsolute(hp) ? hp : join(worktree, hp));
      if (target && writableHere(target)) readOnly.add(target);
    }
  };
  for (const dir of candidates(start, roots)) {
    const dotGit = join(dir, '.git');
    let st;
    try {
      st = lstatSync(dotGit);
    } catch {
      continue;
    }
    if (st.isDirectory()) guardGitDir(dotGit, dir);
    else if (st.isFile()) {
      if (writableHere(dotGit)) readOnly.add(dotGit);
      const gd = gitdirOf(dotGit);
      const rgd = gd ? real(gd) : undefined;
      if (rgd) guardGitDir(rgd, dir);
    }
  }
  return { pin: [...pin].sort(), readOnly: [...readOnly].sort() };
}
