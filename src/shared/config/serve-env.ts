import { readFileSync } from 'node:fs';

/** Parses `KEY=VALUE` lines (optional `export `, quotes, `#` comments). Bad lines are reported, not fatal. */
export function parseServeEnv(text: string): { vars: Record<string, string>; bad: number[] } {
  const vars: Record<string, string> = {};
  const bad: number[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(trimmed);
    if (!m?.[1]) {
      bad.push(i + 1);
      return;
    }
    let value = m[2] ?? '';
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.endsWith(quote) && value.length >= 2)
      value = value.slice(1, -1);
    else value = value.replace(/\s+#.*$/, '');
    vars[m[1]] = value;
  });
  return { vars, bad };
}

/** Loads serve.env into `env` without overriding what the real environment already has. */
export function loadServeEnv(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): { loaded: string[]; bad: number[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { loaded: [], bad: [] };
  }
  const { vars, bad } = parseServeEnv(text);
  const loaded: string[] = [];
  for (const [k, v] of Object.entries(vars)) {
    if (env[k] === undefined) {
      env[k] = v;
      loaded.push(k);
    }
  }
  return { loaded, bad };
}
