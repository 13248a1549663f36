import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { repoRoot } from '../helpers/server.js';

/*
 * The contrast of every colour pair the stylesheet uses, computed from its design tokens in the
 * light and the dark theme (WCAG 2.1 relative luminance): text 4.5:1, field borders 3:1 (1.4.11).
 * A rule that sets a text colour and a background is checked as that pair; a text colour alone is
 * checked on every surface it can sit on; syntax colours on the code background.
 */

const css = readFileSync(join(repoRoot, 'web', 'src', 'styles.css'), 'utf8').replace(
  /\/\*[\s\S]*?\*\//g,
  '',
);

function tokensOf(block: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of block.matchAll(/(--[\w-]+)\s*:\s*(#[0-9a-fA-F]{3,6})\b/g)) out[m[1]!] = m[2]!;
  return out;
}

const lightBlock = /^:root\s*\{([\s\S]*?)\n\}/m.exec(css)?.[1] ?? '';
const darkBlock =
  /@media \(prefers-color-scheme: dark\)\s*\{\s*:root\s*\{([\s\S]*?)\}\s*\}/.exec(css)?.[1] ?? '';
const light = tokensOf(lightBlock);
const themes: Record<string, Record<string, string>> = {
  light,
  dark: { ...light, ...tokensOf(darkBlock) },
};

function rgb(hex: string): [number, number, number] {
  let h = hex.slice(1);
  if (h.length === 3) h = [...h].map((c) => c + c).join('');
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)) as [number, number, number];
}
function luminance(hex: string): number {
  const [r, g, b] = rgb(hex).map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}
export function contrast(a: string, b: string): number {
  const x = luminance(a);
  const y = luminance(b);
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

interface Rule {
  selector: string;
  decls: Record<string, string>;
}

/** The stylesheet's plain rules (the theme blocks and keyframes are read above, not here). */
function rules(): Rule[] {
  const out: Rule[] = [];
  const body = css
    .replace(/@keyframes[^{]*\{(?:[^{}]*\{[^}]*\})*\s*\}/g, '')
    .replace(/@media[^{]*\{/g, '');
  for (const m of body.matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
    const selector = m[1]!.trim();
    if (selector === ':root') continue;
    const decls: Record<string, string> = {};
    for (const d of m[2]!.split(';')) {
      const at = d.indexOf(':');
      if (at > 0) decls[d.slice(0, at).trim()] = d.slice(at + 1).trim();
    }
    out.push({ selector, decls });
  }
  return out;
}

/** A colour value as hex in a theme: a token, a hex literal, or undefined for anything else. */
function resolve(value: string | undefined, theme: Record<string, string>): string | undefined {
  if (!value) return undefined;
  const v = /^var\((--[\w-]+)\)/.exec(value);
  if (v) {
    const hex = theme[v[1]!];
    if (!hex) throw new Error(`the token ${v[1]} is used but not defined`);
    return hex;
  }
  return /^#[0-9a-fA-F]{3,6}$/.test(value) ? value : undefined;
}

/** Where text can sit. */
const SURFACES = ['--bg', '--panel', '--panel-2', '--code-bg', '--user-bg'];
/**
 * Fills with no text on them (a meter, the typing dots, a dimmed scrim, the update dot, whose fill
 * is a text token and so reads on every surface; the badge's name says "update available").
 */
const DECORATIVE = new Set(['.meter > div', '.typing span', '.meter', '.update-dot']);

const all = rules();

test('the stylesheet has both themes and the rules to check', () => {
  assert.ok(Object.keys(light).length >= 20, `light tokens: ${Object.keys(light).join(', ')}`);
  assert.ok(Object.keys(tokensOf(darkBlock)).length >= 20, 'dark tokens');
  assert.ok(all.filter((r) => r.decls.color).length >= 20, 'rules with a text colour');
});

for (const [name, theme] of Object.entries(themes)) {
  test(`${name}: every text colour holds 4.5:1 on its background or on every surface`, () => {
    const failures: string[] = [];
    const check = (sel: string, fg: string, bgName: string, bg: string, min: number) => {
      const r = contrast(fg, bg);
      if (r < min)
        failures.push(`${sel}: ${fg} on ${bgName} ${bg} is ${r.toFixed(2)}:1 (needs ${min}:1)`);
    };
    let pairs = 0;
    for (const r of all) {
      if (DECORATIVE.has(r.selector)) continue;
      const fg = resolve(r.decls.color, theme);
      const bgValue = r.decls.background ?? r.decls['background-color'];
      const bg = resolve(bgValue, theme);
      const syntax = /\.tk-/.test(r.selector);
      if (fg && bg) {
        check(r.selector, fg, bgValue!, bg, 4.5);
        pairs++;
      } else if (fg) {
        for (const s of syntax ? ['--code-bg'] : SURFACES) {
          check(r.selector, fg, s, theme[s]!, 4.5);
          pairs++;
        }
      } else if (bg && bgValue !== 'transparent') {
        // A fill with inherited text: the body text colour must read on it.
        check(r.selector, theme['--text']!, bgValue!, bg, 4.5);
        pairs++;
      }
    }
    // The placeholder and the page text themselves.
    for (const s of SURFACES) check('body text', theme['--text']!, s, theme[s]!, 4.5);
    assert.ok(pairs > 40, `pairs checked: ${pairs}`);
    assert.equal(failures, []);
  });

  test(`${name}: text-field borders hold 3:1 against the surfaces they sit on`, () => {
    const fields = all.filter(
      (r) =>
        /(^|[\s,>])(input|select|textarea)(?![-\w])/.test(r.selector) &&
        (r.decls.border !== undefined || r.decls['border-color'] !== undefined),
    );
    assert.ok(fields.length > 0, "a rule draws the fields' borders");
    const failures: string[] = [];
    for (const r of fields) {
      const border = r.decls.border ?? r.decls['border-color'] ?? '';
      const token = /var\((--[\w-]+)\)/.exec(border)?.[1];
      assert.ok(token, `${r.selector} draws its border with a token: ${border}`);
      for (const s of ['--bg', '--panel', '--panel-2']) {
        const c = contrast(theme[token!]!, theme[s]!);
        if (c < 3) failures.push(`${r.selector}: ${token} on ${s} is ${c.toFixed(2)}:1`);
      }
    }
    assert.equal(failures, []);
  });
}

/**
 * Sizes that are not tokens, each for a reason: the visually-hidden pattern's -1px, the chat's
 * room for the docked side panel (its width), and code at 0.88em of the text around it.
 */
const LITERAL_SIZES = new Set([
  '.sr-only margin: -1px',
  '.chat-pane.with-side padding-right: min(24rem, 100%)',
  'code,\npre,\ntextarea.mono font-size: 0.88em',
]);

test('spacing, type sizes and corners come from the design tokens (docs/design-system.md)', () => {
  const sized = /^(padding|margin|gap|row-gap|column-gap|font-size|border-radius)(-[a-z-]+)?$/;
  const literal: string[] = [];
  let checked = 0;
  for (const r of all)
    for (const [prop, value] of Object.entries(r.decls)) {
      if (!sized.test(prop)) continue;
      checked++;
      const bare = value.replace(/var\(--[\w-]+\)|env\([^)]*\)/g, '');
      if (/\d(rem|em|px)\b/.test(bare) && !LITERAL_SIZES.has(`${r.selector} ${prop}: ${value}`))
        literal.push(
          `${r.selector} { ${prop}: ${value} }: use a token (--space-0…6, --text-xs…xl, --radius-sm/md/lg/pill: docs/design-system.md)`,
        );
    }
  assert.ok(checked > 150, `declarations checked: ${checked}`);
  assert.equal(literal, []);
});

test('every token the stylesheet uses is defined', () => {
  const defined = new Set([...lightBlock.matchAll(/(--[\w-]+)\s*:/g)].map((m) => m[1]));
  const used = new Set([...css.matchAll(/var\((--[\w-]+)/g)].map((m) => m[1]!));
  assert.equal(
    [...used].filter((t) => !defined.has(t)),
    [],
  );
});

test.run();
