import { globSource } from '../../../../shared/glob.js';

export { isLiteralSegment } from '../../../../shared/glob.js';

/** A glob (src/shared/glob.ts) as a RegExp over a relative path, for the glob tool, grep's file filter and .gitignore. */
export function globToRegExp(
  pattern: string,
  opts: { braces?: boolean; flags?: string } = {},
): RegExp {
  return new RegExp(`^${globSource(pattern, { braces: opts.braces ?? false })}$`, opts.flags ?? '');
}
