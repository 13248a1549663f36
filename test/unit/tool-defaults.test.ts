import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { IpcCallError } from '../../src/shared/protocol/endpoint.js';
import { evaluate } from '../../src/workers/agent/permissions/engine.js';
import { parseRules } from '../../src/workers/agent/permissions/rules.js';
import { readRules, setToolDefault } from '../../src/workers/agent/permissions/tool-defaults.js';
import { plainPurpose } from '../../src/workers/agent/tools/remote/mcp.js';

/*
 * Settings → Tools' switch writes a tool's default into permissions.yml: the user's other lines
 * stay, an entry equal to what the tool has anyway is removed rather than written, the engine then
 * decides by it, and what the engine forbids (allowing restart_server) or a broken file is refused.
 */

const dir = mkdtempSync(join(tmpdir(), 'svc-tool-defaults-'));
const file = join(dir, 'permissions.yml');
const text = () => readFileSync(file, 'utf8');
const refusal = (fn: () => unknown): IpcCallError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof IpcCallError) return err;
    throw err;
  }
  throw new Error('it was not refused');
};

test.after(() => rmSync(dir, { recursive: true, force: true }));

test('allow writes a default the engine follows; back to the built-in value the entry goes', () => {
  writeFileSync(file, '# my rules\nweb_fetch:\n  - deny: { host: "*.corp" } # no intranet\n');
  assert.equal(setToolDefault(file, 'write_file', 'allow'), {
    default: 'allow',
    source: 'permissions.yml',
    locked: null,
  });
  assert.match(text(), /^# my rules$/m);
  assert.match(text(), /# no intranet/);
  assert.match(text(), /write_file:\n {2}- default: allow/);
  const decision = evaluate(
    { tool: 'write_file', path: '/elsewhere/notes.txt', cwd: dir },
    parseRules(text()).rules,
    { svcHome: join(dir, 'home'), home: dir, svcPids: [], sandboxed: true },
  );
  assert.is(decision.verdict, 'allow', decision.reason);
  assert.equal(setToolDefault(file, 'write_file', 'ask'), {
    default: 'ask',
    source: 'built-in',
    locked: null,
  });
  assert.not.match(text(), /write_file/);
  assert.match(text(), /web_fetch:/);
});

test("a '*' default is taken into account: allowing terminal under '*: ask' writes its own entry", () => {
  writeFileSync(file, '"*":\n  - default: ask\n');
  setToolDefault(file, 'terminal', 'allow');
  assert.match(text(), /terminal:\n {2}- default: allow/);
  setToolDefault(file, 'terminal', 'ask');
  assert.not.match(text(), /terminal/, 'ask is what * gives it anyway');
  rmSync(file);
  setToolDefault(file, 'terminal', 'ask');
  setToolDefault(file, 'terminal', 'allow');
  assert.is(text(), '', 'no default: allow left for terminal (its no-sandbox care stays)');
});

test('restart_server cannot be allowed; a broken permissions.yml is left as it is', () => {
  const locked = refusal(() => setToolDefault(file, 'restart_server', 'allow'));
  assert.is(locked.code, 'conflict');
  assert.match(locked.message, /always asks/);
  writeFileSync(file, 'terminal:\n  - default: maybe\n');
  const broken = refusal(() => setToolDefault(file, 'glob', 'ask'));
  assert.is(broken.code, 'conflict');
  assert.match(broken.message, /permissions\.yml has a problem/);
  assert.is(text(), 'terminal:\n  - default: maybe\n');
  assert.is(refusal(() => readRules(file)).code, 'conflict');
});

test("an MCP tool's purpose is its description's first sentence without Markdown", () => {
  assert.is(
    plainPurpose('Runs `git status` in the **repo**.\n\nArgs: `path` (string)'),
    'Runs git status in the repo.',
  );
  assert.is(
    plainPurpose('See [the docs](https://x.example) for _details_'),
    'See the docs for details',
  );
  assert.is(plainPurpose('# Search\nFinds things.'), 'Search');
  assert.is(plainPurpose(''), '');
  assert.ok(plainPurpose('x'.repeat(500)).length <= 200);
});

test.run();
