/**
 * What a tool call did, in a person's words, for the headline of its card: `$ npm test` for a
 * command, the file for a file tool, the server and tool of an MCP call with its key argument.
 * The raw arguments stay available in the card; this is only the headline.
 */
export interface CallView {
  /** A short verb or label before the subject ("Read", "Fetched", "github › search_issues"). */
  label: string;
  /** The thing acted on (a command, a path, an address, a query); shown in monospace. */
  subject?: string;
}

/** A tool's arguments as an object, or an empty one when they are not JSON (yet: still streaming). */
export function parseArgs(args: string | undefined): Record<string, unknown> {
  if (!args) return {};
  try {
    const v: unknown = JSON.parse(args);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() ? v : typeof v === 'number' ? String(v) : undefined;

/** One line of at most `max` characters (a long command or argument is cut with an ellipsis). */
export function oneLine(text: string, max = 120): string {
  const lines = text.trim().split('\n');
  let line = lines[0]!.trim();
  if (lines.length > 1) line += ' …';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const FILE_VERBS: Record<string, string> = {
  read_file: 'Read',
  write_file: 'Wrote',
  edit_file: 'Edited',
  delete_file: 'Deleted',
};

/** The argument that says most about an MCP (or unknown) tool call: a well-known key, else the first text. */
const KEY_ARGS = ['command', 'query', 'q', 'url', 'uri', 'path', 'file', 'name', 'id', 'text'];
function keyArgument(a: Record<string, unknown>): string | undefined {
  for (const k of KEY_ARGS) {
    const v = str(a[k]);
    if (v) return v;
  }
  for (const v of Object.values(a)) {
    const s = str(v);
    if (s) return s;
  }
  return undefined;
}

/** `mcp__<server>__<tool>` split into its server and tool; undefined for svc's own tools. */
export function mcpName(name: string): { server: string; tool: string } | undefined {
  const m = /^mcp__(.+?)__(.+)$/.exec(name);
  return m ? { server: m[1]!, tool: m[2]! } : undefined;
}

export function describeCall(name: string, args: string | undefined): CallView {
  const a = parseArgs(args);
  const subject = (v: unknown) => {
    const s = str(v);
    return s ? oneLine(s) : undefined;
  };
  const view = (label: string, v?: unknown): CallView => {
    const s = subject(v);
    return s ? { label, subject: s } : { label };
  };
  if (name === 'terminal') {
    const cmd = subject(a.command);
    return cmd
      ? { label: a.background === true ? 'Started' : 'Ran', subject: `$ ${cmd}` }
      : { label: 'Terminal' };
  }
  const verb = FILE_VERBS[name];
  if (verb) return view(verb, a.path);
  const mcp = mcpName(name);
  if (mcp) return view(`${mcp.server} › ${mcp.tool}`, keyArgument(a));
  switch (name) {
    case 'grep':
      return view('Searched files for', a.pattern);
    case 'glob':
      return view('Listed files', a.pattern);
    case 'web_fetch':
      return view('Fetched', a.url);
    case 'search_history':
      return view('Searched past chats for', a.query);
    case 'browser':
      return view(`Browser: ${str(a.action) ?? 'step'}`, a.url ?? a.target ?? a.text);
    case 'terminal_output':
      return view('Read the output of a command');
    case 'terminal_stop':
      return view('Stopped a command');
    case 'skill':
      return view('Used the skill', a.name);
    case 'run_workflow':
      return view('Ran the workflow', a.name);
    case 'current_time':
      return view('Checked the time', a.time_zone);
    default:
      return view(name, keyArgument(a));
  }
}

/**
 * How a terminal command ended: its exit line (`[exit code 7]`, `[ended by signal X]`), the last
 * one in the output, since notes (a timeout, a sandbox hint) may follow it.
 */
export function commandEnd(output: string): { code: number } | { signal: string } | undefined {
  let last: RegExpMatchArray | undefined;
  for (const m of output.matchAll(/^\[(?:exit code (\d+)|ended by signal ([^\]\n]+))\]$/gm))
    last = m;
  if (!last) return undefined;
  return last[1] !== undefined ? { code: Number(last[1]) } : { signal: last[2]! };
}
