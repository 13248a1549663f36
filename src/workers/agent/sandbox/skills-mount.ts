import { lstatSync, mkdirSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { log } from '../../../shared/log.js';
import { inside } from './bwrap.js';

/*
 * Skills ship scripts the agent is told to run, but they live in svc's home (or an installed
 * version under it), which the sandbox hides. Each enabled skill's folder appears read-only at
 * SKILLS_MOUNT/<name> instead, and nothing else of svc's home does. The path is under the
 * session's private /tmp because the sandbox's root is read-only: a new top-level folder cannot
 * be made there.
 */

/** Where enabled skills appear inside the sandbox. */
export const SKILLS_MOUNT = '/tmp/svc-skills';

/** The folder of a skill as sandboxed commands see it. */
export const skillMountPath = (name: string) => `${SKILLS_MOUNT}/${name}`;

/** Entries a skill folder is checked for links up to; a bigger one is not shown. */
const CHECK_MAX = 5000;

export interface Reveal {
  src: string;
  dest: string;
}

/**
 * Why a skill folder may not be shown, or undefined when it may: the folder must be a real folder
 * inside its skills root (not a link to elsewhere), and no link inside it may lead out of it.
 */
export function revealProblem(dir: string): string | undefined {
  let root: string;
  try {
    if (lstatSync(dir).isSymbolicLink()) return 'the skill folder is a symbolic link';
    root = realpathSync(dir);
    if (!inside(root, realpathSync(dirname(dir)))) return 'the skill folder leads elsewhere';
  } catch {
    return 'the skill folder cannot be read';
  }
  let seen = 0;
  const walk = (d: string): string | undefined => {
    for (const name of readdirSync(d)) {
      if (++seen > CHECK_MAX) return `it holds more than ${CHECK_MAX} entries`;
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isSymbolicLink()) {
        let target: string;
        try {
          target = realpathSync(p);
        } catch {
          return `${p} is a link to nothing`;
        }
        if (!inside(target, root)) return `${p} links outside the skill`;
      } else if (st.isDirectory()) {
        const problem = walk(p);
        if (problem) return problem;
      }
    }
    return undefined;
  };
  try {
    return walk(root);
  } catch {
    return 'the skill folder cannot be read';
  }
}

/** Makes `p` a real folder: a link or file a command left there goes (a folder stays: a running command may have a mount on it). */
function realFolder(p: string): void {
  try {
    if (lstatSync(p).isDirectory()) return;
    rmSync(p, { recursive: true, force: true });
  } catch {
    // missing: made below
  }
  mkdirSync(p, { mode: 0o755 });
}

/**
 * The mounts for the usable skills, each checked. Their mount points live in the session's private
 * /tmp, which commands can write: each is made a real folder first, so a link planted there
 * cannot send the mount elsewhere.
 */
export function skillReveals(
  list: () => Array<{ name: string; dir: string }>,
  tmp: string,
): Reveal[] {
  const out: Reveal[] = [];
  let skills: Array<{ name: string; dir: string }>;
  try {
    skills = list();
  } catch (err) {
    // The skills could not be listed (a busy store): the command runs, without them.
    log.warn('the skills could not be listed for a sandboxed command', {
      error: err instanceof Error ? err.message : String(err),
    });
    return out;
  }
  try {
    realFolder(join(tmp, 'svc-skills'));
  } catch {
    return out;
  }
  for (const s of skills) {
    const problem = revealProblem(s.dir);
    if (problem) {
      log.warn('a skill folder is not shown to sandboxed commands', { skill: s.name, problem });
      continue;
    }
    try {
      realFolder(join(tmp, 'svc-skills', s.name));
      out.push({ src: realpathSync(s.dir), dest: skillMountPath(s.name) });
    } catch {
      // its mount point cannot be made: the skill is not shown
    }
  }
  return out;
}
