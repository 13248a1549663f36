import { createRequire } from 'node:module';
import { Language, Parser, type Node, type Tree } from 'web-tree-sitter';
import { budgetSpent } from './budget.js';

/**
 * The bash grammar (tree-sitter-bash, run by web-tree-sitter; both ship their WASM). It loads
 * once per process; until it has, parseBash throws, and the engine turns that into a refusal.
 * A parse that runs past its time budget is cancelled (null), which the engine treats as a
 * line it could not read.
 */

const require = createRequire(import.meta.url);

let parser: Parser | null = null;
let loading: Promise<void> | null = null;

/** Loads the grammar (once); every permission check awaits this before it runs. */
export function loadShellParser(): Promise<void> {
  loading ??= (async () => {
    await Parser.init({ locateFile: () => require.resolve('web-tree-sitter/tree-sitter.wasm') });
    const bash = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    const p = new Parser();
    p.setLanguage(bash);
    // The first parses compile the grammar's WASM paths; do that now rather than in a user's check.
    for (let i = 0; i < 3; i++)
      p.parse(
        'cd "$HOME/x" && { a=$(b | c -d "${e:-f}"); } <<EOF > g 2>&1 || h \'i\'\nj\nEOF\n',
      )?.delete();
    parser = p;
  })();
  return loading;
}

export function shellParserReady(): boolean {
  return parser !== null;
}

/** Parses one bash text; null when it ran past the check's time budget (cancelled). */
export function parseBash(text: string): Tree | null {
  if (parser === null) throw new Error('the bash grammar is not loaded yet');
  let cancelled = false;
  const tree = parser.parse(text, null, {
    progressCallback: () => {
      if (budgetSpent()) cancelled = true;
      return cancelled;
    },
  });
  if (cancelled || tree === null) {
    tree?.delete();
    return null;
  }
  return tree;
}

export type { Node, Tree };
