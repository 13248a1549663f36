/**
 * What a mistyped command line most likely meant. Every usage error stays one line; these
 * only make that line point somewhere.
 */

/** Flags people bring from other servers, and what svc calls them. */
const FAMILIAR: Record<string, string> = {
  '--port': '--addr HOST:PORT (e.g. --addr 127.0.0.1:9000)',
  '--host': '--addr HOST:PORT (e.g. --addr 0.0.0.0:8088)',
  '--bind': '--addr HOST:PORT',
  '--listen': '--addr HOST:PORT',
  '--key': '--access-key KEY',
  '--token': '--access-key KEY',
  '--background': '-d',
  '--detach': '-d',
  '--verbose': '"svc logs -f" in another terminal',
};

/** Optimal string alignment distance: one edit per insertion, deletion, change or swap. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  return d[a.length]![b.length]!;
}

/** The candidates close enough to be what was meant (all of the best, when several tie). */
export function closest(word: string, candidates: readonly string[]): string[] {
  const limit = word.length <= 4 ? 1 : 2;
  const score = (c: string) => (c.startsWith(word) && word.length >= 3 ? 0.5 : distance(word, c));
  const best = Math.min(...candidates.map(score));
  return best <= limit ? candidates.filter((c) => score(c) === best) : [];
}

const either = (words: string[], quote = '') =>
  words.map((w) => `${quote}${w}${quote}`).join(' or ');

/** `unknown option --port; did you mean --addr HOST:PORT …? see "svc serve --help"` */
export function unknownOption(flag: string, known: readonly string[], command?: string): string {
  const name = flag.replace(/=.*$/, '');
  const hint = Object.hasOwn(FAMILIAR, name) ? FAMILIAR[name] : either(closest(name, known));
  const help = command ? `svc ${command} --help` : 'svc --help';
  return `unknown option ${name}${hint ? `; did you mean ${hint}?` : ''} (see "${help}")`;
}

/** `unknown command "servce"; did you mean "serve"? …` */
export function unknownCommand(word: string, commands: readonly string[]): string {
  const near = either(closest(word, commands), '"');
  return `unknown command "${word}"${near ? `; did you mean ${near}?` : ''} (the commands are ${commands.join(', ')})`;
}

/** `unknown key action "shw"; did you mean "show"? (svc key show, svc key rotate)` */
export function unknownAction(command: string, word: string, choices: readonly string[]): string {
  const near = either(closest(word, choices), '"');
  const all = choices.map((c) => `svc ${command} ${c}`).join(', ');
  return `unknown ${command} action "${word}"${near ? `; did you mean ${near}?` : ''} (${all})`;
}
