import { existsSync, readdirSync, statSync, type Dirent } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { isIgnored, loadGitignore, loadIgnoreFile, type IgnoreLayer } from './gitignore.js';

/** Never searched, whatever the ignore files say. */
const ALWAYS_SKIPPED = new Set(['node_modules', '.git']);
const MAX_DEPTH = 64;

export interface WalkLimits {
  /** Stop after seeing this many files. */
  maxFiles: number;
  /** Stop at this time (Date.now() scale). */
  deadline: number;
  /** Absolute paths (files or folders) to leave out. */
  skip?: ReadonlySet<string>;
}

export interface WalkStats {
  scanned: number;
  /** Why the walk stopped early, if it did. */
  stopped: 'files' | 'time' | null;
}

/**
 * Regular files under `root` in name order, depth first, honouring .gitignore files from the
 * enclosing repository's root down (and .git/info/exclude), skipping node_modules, .git and
 * symbolic links (which could loop). A root that is a file yields just that file.
 */
export function* walkFiles(root: string, limits: WalkLimits, stats: WalkStats): Generator<string> {
  for (const s of limits.skip ?? [])
    if (root === s || root.startsWith(s.endsWith(sep) ? s : s + sep)) return;
  const st = statSync(root);
  if (st.isFile()) {
    stats.scanned++;
    yield root;
    return;
  }
  yield* visit(root, ancestorLayers(root), 0, limits, stats);
}

function* visit(
  dir: string,
  parentLayers: readonly IgnoreLayer[],
  depth: number,
  limits: WalkLimits,
  stats: WalkStats,
): Generator<string> {
  if (depth > MAX_DEPTH) return;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // unreadable folder: search what can be searched
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const own = entries.some((e) => e.name === '.gitignore' && e.isFile())
    ? loadGitignore(dir)
    : null;
  const layers = own ? [...parentLayers, own] : parentLayers;
  for (const e of entries) {
    if (stats.stopped) return;
    if (ALWAYS_SKIPPED.has(e.name) || e.isSymbolicLink()) continue;
    const abs = join(dir, e.name);
    if (limits.skip?.has(abs)) continue;
    if (e.isDirectory()) {
      if (!isIgnored(layers, abs, e.name, true))
        yield* visit(abs, layers, depth + 1, limits, stats);
    } else if (e.isFile()) {
      if (stats.scanned >= limits.maxFiles) {
        stats.stopped = 'files';
        return;
      }
      if ((stats.scanned & 63) === 0 && Date.now() > limits.deadline) {
        stats.stopped = 'time';
        return;
      }
      stats.scanned++;
      if (!isIgnored(layers, abs, e.name, false)) yield abs;
    }
  }
}

/**
 * When the walk starts inside a git repository, the ignore files between the repository root and
 * the starting folder apply too (the starting folder's own is read by the walk).
 */
function ancestorLayers(root: string): IgnoreLayer[] {
  const chain: string[] = [];
  let repo: string | null = null;
  for (let d = root; ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) {
      repo = d;
      break;
    }
    chain.push(d);
    if (dirname(d) === d) break;
  }
  if (repo === null) return [];
  const layers: IgnoreLayer[] = [];
  const exclude = loadIgnoreFile(repo, join(repo, '.git', 'info', 'exclude'));
  if (exclude) layers.push(exclude);
  // From the repository root down to the starting folder's parent.
  const dirs = [repo, ...chain.slice(1).reverse()];
  for (const d of dirs) {
    if (d === root) continue;
    const l = loadGitignore(d);
    if (l) layers.push(l);
  }
  return layers;
}
