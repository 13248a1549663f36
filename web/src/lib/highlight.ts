/**
 * A tiny syntax highlighter: each language is a list of token rules (comment, string, number,
 * keyword, ...) joined into one regular expression. It returns [class, text] pairs that the
 * code block renders as text inside spans, so code is never parsed as HTML.
 */

export type Token = [cls: string, text: string];

type Rule = [cls: string, source: string];

const words = (list: string, flags = '') =>
  `\\b(?:${list.trim().split(/\s+/).join('|')})\\b${flags}`;

const STR_D = `"(?:[^"\\\\\\n]|\\\\.)*"?`;
const STR_S = `'(?:[^'\\\\\\n]|\\\\.)*'?`;
const STR_B = '`(?:[^`\\\\]|\\\\[\\s\\S])*`?';
const NUM =
  '\\b(?:0[xX][\\da-fA-F_]+|0[bB][01_]+|\\d[\\d_]*(?:\\.\\d[\\d_]*)?(?:[eE][+-]?\\d+)?)[a-zA-Z]*\\b';
const C_COMMENT = '\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?(?:\\*\\/|$)';
const HASH_COMMENT = '#[^\\n]*';
const FUNC = '\\b[A-Za-z_$][\\w$]*(?=\\s*\\()';

const JS_KW = `break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return super switch this throw try typeof var void while with yield async await static get set as interface type enum implements private public protected readonly declare namespace abstract keyof satisfies`;
const LITERALS = 'true false null undefined NaN Infinity None True False nil';

const C_LIKE_KW = `auto break case char const continue default do double else enum extern float for goto if inline int long register return short signed sizeof static struct switch typedef union unsigned void volatile while bool class namespace template typename public private protected virtual override new delete this using try catch throw final package import interface extends implements abstract synchronized boolean byte func go chan defer select map range type var fn let mut impl trait pub use mod crate self Self match loop where move ref dyn unsafe async await struct val fun when object companion lateinit`;

const langs: Record<string, Rule[]> = {
  js: [
    ['comment', C_COMMENT],
    ['string', `${STR_D}|${STR_S}|${STR_B}`],
    ['number', NUM],
    ['keyword', words(JS_KW)],
    ['literal', words(LITERALS)],
    ['func', FUNC],
  ],
  py: [
    ['comment', HASH_COMMENT],
    [
      'string',
      `[rbfuRBFU]{0,2}(?:"""[\\s\\S]*?(?:"""|$)|'''[\\s\\S]*?(?:'''|$)|${STR_D}|${STR_S})`,
    ],
    ['number', NUM],
    [
      'keyword',
      words(
        'and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case self',
      ),
    ],
    ['literal', words(LITERALS)],
    ['meta', '@[\\w.]+'],
    ['func', FUNC],
  ],
  sh: [
    ['comment', '(?:^|(?<=\\s))#[^\\n]*'],
    ['string', `${STR_D}|'[^']*'?`],
    ['var', '\\$(?:\\{[^}\\n]*\\}?|[\\w@#?$!*-]+)'],
    [
      'keyword',
      words(
        'if then else elif fi for while until do done case esac in function return export local readonly set unset shift exit source alias sudo',
      ),
    ],
    ['number', '\\b\\d+\\b'],
    ['func', '(?:^|(?<=[|;&]\\s*))[\\w.-]+(?=\\s|$)'],
  ],
  json: [
    ['attr', `${STR_D}(?=\\s*:)`],
    ['string', STR_D],
    ['number', '-?\\b\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?\\b'],
    ['literal', words('true false null')],
  ],
  c: [
    ['comment', C_COMMENT],
    ['meta', '^\\s*#\\s*\\w+'],
    ['string', `${STR_D}|${STR_S}|${STR_B}`],
    ['number', NUM],
    ['keyword', words(C_LIKE_KW)],
    ['literal', words(LITERALS)],
    ['type', '\\b[A-Z][\\w]*\\b'],
    ['func', FUNC],
  ],
  yaml: [
    ['comment', HASH_COMMENT],
    ['attr', '^[ \\t-]*[\\w.\\/-]+(?=\\s*:(?:\\s|$))'],
    ['string', `${STR_D}|${STR_S}`],
    ['number', '\\b\\d+(?:\\.\\d+)?\\b'],
    ['literal', words('true false null yes no on off ~')],
  ],
  sql: [
    ['comment', '--[^\\n]*|\\/\\*[\\s\\S]*?(?:\\*\\/|$)'],
    ['string', `'(?:[^']|'')*'?`],
    ['number', NUM],
    [
      'keyword',
      words(
        'select from where and or not insert into values update set delete create table index view drop alter add column primary key foreign references join left right inner outer full on group by order having limit offset as distinct union all case when then else end is null like in between exists begin commit rollback transaction with returning default unique check integer text real blob varchar',
      ),
    ],
  ],
  html: [
    ['comment', '<!--[\\s\\S]*?(?:-->|$)'],
    ['keyword', '<\\/?[A-Za-z][\\w:-]*|\\/?>'],
    ['attr', '\\b[\\w:-]+(?==)'],
    ['string', `${STR_D}|${STR_S}`],
  ],
  css: [
    ['comment', '\\/\\*[\\s\\S]*?(?:\\*\\/|$)'],
    ['string', `${STR_D}|${STR_S}`],
    ['attr', '[\\w-]+(?=\\s*:[^;{]*[;}])'],
    ['number', '-?\\b\\d+(?:\\.\\d+)?(?:px|em|rem|%|vh|vw|s|ms|deg|fr)?'],
    ['keyword', '@[\\w-]+|![\\w]+'],
    ['literal', '#[\\da-fA-F]{3,8}\\b'],
  ],
  diff: [
    ['meta', '^@@[^\\n]*'],
    ['added', '^\\+[^\\n]*'],
    ['removed', '^-[^\\n]*'],
  ],
  generic: [
    ['comment', `${C_COMMENT}|${HASH_COMMENT}`],
    ['string', `${STR_D}|${STR_S}`],
    ['number', NUM],
  ],
};

const aliases: Record<string, string> = {
  javascript: 'js',
  jsx: 'js',
  mjs: 'js',
  cjs: 'js',
  ts: 'js',
  tsx: 'js',
  typescript: 'js',
  node: 'js',
  python: 'py',
  python3: 'py',
  bash: 'sh',
  shell: 'sh',
  zsh: 'sh',
  console: 'sh',
  shellsession: 'sh',
  sh: 'sh',
  jsonc: 'json',
  json5: 'json',
  cpp: 'c',
  'c++': 'c',
  h: 'c',
  hpp: 'c',
  cc: 'c',
  java: 'c',
  go: 'c',
  golang: 'c',
  rust: 'c',
  rs: 'c',
  cs: 'c',
  csharp: 'c',
  kotlin: 'c',
  kt: 'c',
  swift: 'c',
  scala: 'c',
  php: 'c',
  dart: 'c',
  zig: 'c',
  yml: 'yaml',
  toml: 'yaml',
  ini: 'yaml',
  postgres: 'sql',
  sqlite: 'sql',
  mysql: 'sql',
  psql: 'sql',
  xml: 'html',
  svg: 'html',
  vue: 'html',
  scss: 'css',
  less: 'css',
  patch: 'diff',
};

const compiled = new Map<string, { re: RegExp; classes: string[] } | null>();

function compile(lang: string): { re: RegExp; classes: string[] } | null {
  const key = aliases[lang] ?? (lang in langs ? lang : 'generic');
  if (compiled.has(key)) return compiled.get(key)!;
  const rules = langs[key]!;
  let result: { re: RegExp; classes: string[] } | null;
  try {
    result = {
      re: new RegExp(rules.map(([, s]) => `(${s})`).join('|'), key === 'sql' ? 'gmi' : 'gm'),
      classes: rules.map(([c]) => c),
    };
  } catch {
    // A browser without lookbehind: fall back to the generic rules.
    result = key === 'generic' ? null : compile('generic');
  }
  compiled.set(key, result);
  return result;
}

const MAX_HIGHLIGHT = 100_000;

export function highlight(code: string, lang: string): Token[] {
  const c = code.length <= MAX_HIGHLIGHT ? compile(lang.toLowerCase()) : null;
  if (!c) return [['', code]];
  const out: Token[] = [];
  const re = new RegExp(c.re.source, c.re.flags);
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(code))) {
    if (m[0] === '') {
      re.lastIndex++;
      continue;
    }
    if (m.index > last) out.push(['', code.slice(last, m.index)]);
    const group = m.findIndex((g, i) => i > 0 && g !== undefined);
    out.push([c.classes[group - 1] ?? '', m[0]]);
    last = m.index + m[0].length;
  }
  if (last < code.length) out.push(['', code.slice(last)]);
  return out;
}
