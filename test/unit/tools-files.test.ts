import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { trashKinds } from '../../src/gateway/routes/trash.js';
import { refusalOf } from '../../src/shared/errors.js';
import { resolvePaths, type Paths } from '../../src/shared/paths.js';
import { openAndMigrate, type Db } from '../../src/shared/store/db.js';
import { getFileRead } from '../../src/shared/store/file-reads.js';
import { getTrashItem, listTrash, restoreFromTrash } from '../../src/shared/store/trash.js';
import { builtinTools, closeSearchPool, fileTools } from '../../src/workers/agent/tools/index.js';
import {
  ToolRegistry,
  type ToolContext,
  type ToolResult,
} from '../../src/workers/agent/tools/registry.js';
import { thrown } from '../helpers/rejects.js';

const root = mkdtempSync(join(tmpdir(), 'svc-tools-files-'));
const work = join(root, 'work');
mkdirSync(work);
const paths: Paths = resolvePaths({ SVC_HOME: join(root, 'home') });
mkdirSync(paths.home, { recursive: true });
const db: Db = openAndMigrate(paths.db).db;
const registry = new ToolRegistry(fileTools);

function ctx(sessionId = 's_one'): ToolContext {
  return {
    sessionId,
    turnId: 'u_1',
    callId: 'c_1',
    workingDir: work,
    signal: new AbortController().signal,
    db,
    paths,
    emit: () => undefined,
  };
}

/** Calls a tool the way a turn does: JSON arguments through the registry. */
function call(name: string, args: Record<string, unknown>, session?: string): Promise<ToolResult> {
  return registry.call(name, JSON.stringify(args), ctx(session));
}

const file = (name: string) => join(work, name);

test.after(async () => {
  await closeSearchPool();
  db.close();
  rmSync(root, { recursive: true, force: true });
});

test('the built-in tools have JSON schemas for the model', () => {
  const specs = new ToolRegistry(builtinTools()).specs();
  assert.equal(
    specs.map((s) => s.name),
    ['read_file', 'write_file', 'edit_file', 'delete_file', 'glob', 'grep', 'web_fetch'],
  );
  for (const s of specs) assert.is(s.parameters.type, 'object', s.name);
  const read = specs[0]!.parameters as { properties: Record<string, unknown>; required: string[] };
  assert.equal(Object.keys(read.properties), ['path', 'offset_line', 'limit_lines']);
  assert.equal(read.required, ['path']);
});

test('read_file numbers lines, reads ranges, notes truncation and the end', async () => {
  writeFileSync(
    file('lines.txt'),
    Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n') + '\n',
  );
  const all = await call('read_file', { path: 'lines.txt' });
  assert.not.ok(all.isError);
  assert.ok(all.output.startsWith('     1\tline 1\n     2\tline 2'), all.output.slice(0, 40));
  assert.match(all.output, /\[end of file: 30 lines\]$/);

  const part = await call('read_file', { path: 'lines.txt', offset_line: 10, limit_lines: 5 });
  const rows = part.output.split('\n');
  assert.is(rows[0], '    10\tline 10');
  assert.is(rows[4], '    14\tline 14');
  assert.match(rows[5]!, /lines 10–14 of 30 shown.*offset_line=15/);

  const past = await call('read_file', { path: 'lines.txt', offset_line: 99 });
  assert.not.ok(past.isError);
  assert.match(past.output, /past the end: the file has 30 lines/);

  const abs = await call('read_file', { path: file('lines.txt'), limit_lines: 1 });
  assert.match(abs.output, /offset_line=2/);
  assert.ok(getFileRead(db, 's_one', file('lines.txt')), 'the read is recorded');

  const bad = await call('read_file', { path: 'lines.txt', limit_lines: 10_001 });
  assert.ok(bad.isError, 'limit_lines above the max is refused by the schema');
});

test('read_file refuses binaries, folders, missing and huge files, and svc secrets', async () => {
  writeFileSync(file('nul.bin'), Buffer.from([0x68, 0x69, 0x00, 0x01]));
  writeFileSync(file('latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x21])); // "café !" in Latin-1: not UTF-8
  writeFileSync(file('utf8.txt'), 'café ✓\n');
  for (const name of ['nul.bin', 'latin1.txt']) {
    const r = await call('read_file', { path: name });
    assert.ok(r.isError, name);
    assert.match(r.output, /looks binary/);
  }
  assert.match((await call('read_file', { path: 'utf8.txt' })).output, /café ✓/);
  const dir = await call('read_file', { path: '.' });
  assert.ok(dir.isError);
  assert.match(dir.output, /is a folder/);
  assert.match((await call('read_file', { path: 'nope.txt' })).output, /does not exist/);

  const big = file('big.txt');
  writeFileSync(big, '');
  // A sparse 11 MiB file: over the cap without writing 11 MiB.
  const { truncateSync } = await import('node:fs');
  truncateSync(big, 11 * 1024 * 1024);
  const r = await call('read_file', { path: 'big.txt' });
  assert.ok(r.isError);
  assert.match(r.output, /over the 10\.0 MiB limit/);

  writeFileSync(paths.accessKey, 'secret-key');
  const secret = await call('read_file', { path: paths.accessKey });
  assert.ok(secret.isError);
  assert.match(secret.output, /belongs to svc itself/);
});

test('write_file creates parents, answers size and lines, and returns the path as written', async () => {
  const r = await call('write_file', { path: 'new/deep/notes.md', content: 'a\nb\nc\n' });
  assert.not.ok(r.isError, r.output);
  assert.match(r.output, /Created new\/deep\/notes\.md \(6 B, 3 lines\)/);
  assert.equal(r.wrote, [file('new/deep/notes.md')]);
  assert.is(readFileSync(file('new/deep/notes.md'), 'utf8'), 'a\nb\nc\n');
  // The agent knows what it wrote: it may edit without reading first.
  const e = await call('edit_file', { path: 'new/deep/notes.md', old_text: 'b', new_text: 'B' });
  assert.not.ok(e.isError, e.output);
  assert.is(readFileSync(file('new/deep/notes.md'), 'utf8'), 'a\nB\nc\n');
});

test('write_file refuses an existing file not read in this session, and one changed since the read', async () => {
  writeFileSync(file('existing.txt'), 'original\n');
  const unread = await call('write_file', { path: 'existing.txt', content: 'new\n' });
  assert.ok(unread.isError);
  assert.match(unread.output, /has not been read in this session.*read_file first/);
  assert.is(readFileSync(file('existing.txt'), 'utf8'), 'original\n');

  await call('read_file', { path: 'existing.txt' });
  // Another session's read does not count for this one.
  const other = await call('write_file', { path: 'existing.txt', content: 'new\n' }, 's_two');
  assert.ok(other.isError);

  writeFileSync(file('existing.txt'), 'changed by someone else\n');
  const stale = await call('write_file', { path: 'existing.txt', content: 'new\n' });
  assert.ok(stale.isError);
  assert.match(stale.output, /has changed since you last read it/);
  assert.is(readFileSync(file('existing.txt'), 'utf8'), 'changed by someone else\n');
  const staleEdit = await call('edit_file', {
    path: 'existing.txt',
    old_text: 'changed',
    new_text: 'x',
  });
  assert.ok(staleEdit.isError);
  assert.match(staleEdit.output, /has changed since/);

  await call('read_file', { path: 'existing.txt' });
  const ok = await call('write_file', { path: 'existing.txt', content: 'new\n' });
  assert.not.ok(ok.isError, ok.output);
  assert.match(
    ok.output,
    /Overwrote existing\.txt \(4 B, 1 line\)\. The previous content is in the trash \(t_/,
  );
});

test('edit_file: old_text exactly once unless replace_all, with counts', async () => {
  writeFileSync(file('edit.ts'), 'let a = 1;\nlet b = 1;\nlet c = 2;\n');
  await call('read_file', { path: 'edit.ts' });
  const missing = await call('edit_file', { path: 'edit.ts', old_text: 'let d', new_text: 'x' });
  assert.ok(missing.isError);
  assert.match(missing.output, /was not found/);
  const many = await call('edit_file', { path: 'edit.ts', old_text: '= 1;', new_text: '= 3;' });
  assert.ok(many.isError);
  assert.match(many.output, /occurs 2 times .*lines 1, 2.*replace_all/);
  const same = await call('edit_file', { path: 'edit.ts', old_text: 'a', new_text: 'a' });
  assert.ok(same.isError);
  const one = await call('edit_file', {
    path: 'edit.ts',
    old_text: 'let c = 2;',
    new_text: 'let c = $&2;',
  });
  assert.not.ok(one.isError, one.output);
  assert.match(one.output, /replaced 1 occurrence \(line 3\)/);
  const all = await call('edit_file', {
    path: 'edit.ts',
    old_text: '= 1;',
    new_text: '= 3;',
    replace_all: true,
  });
  assert.match(all.output, /replaced 2 occurrences \(lines 1, 2\)/);
  assert.equal(all.wrote, [file('edit.ts')]);
  assert.is(
    readFileSync(file('edit.ts'), 'utf8'),
    'let a = 3;\nlet b = 3;\nlet c = $&2;\n',
    'replacement text is literal',
  );
  const nofile = await call('edit_file', { path: 'ghost.ts', old_text: 'a', new_text: 'b' });
  assert.match(nofile.output, /does not exist; use write_file/);
});

test('edit_file keeps CRLF line ends and an existing file mode', async () => {
  writeFileSync(file('crlf.txt'), 'one\r\ntwo\r\nthree\r\n');
  chmodSync(file('crlf.txt'), 0o640);
  await call('read_file', { path: 'crlf.txt' });
  const r = await call('edit_file', {
    path: 'crlf.txt',
    old_text: 'one\ntwo',
    new_text: 'uno\ndos',
  });
  assert.not.ok(r.isError, r.output);
  assert.is(readFileSync(file('crlf.txt'), 'utf8'), 'uno\r\ndos\r\nthree\r\n');
  assert.is(statSync(file('crlf.txt')).mode & 0o777, 0o640);
});

test('write_file through a symlink replaces the target and keeps the link', async () => {
  writeFileSync(file('target.txt'), 'target\n');
  symlinkSync(file('target.txt'), file('link.txt'));
  await call('read_file', { path: 'link.txt' });
  const r = await call('write_file', { path: 'link.txt', content: 'via link\n' });
  assert.not.ok(r.isError, r.output);
  assert.is(readFileSync(file('target.txt'), 'utf8'), 'via link\n');
  assert.ok(statSync(file('link.txt')).isFile());
});

test('overwrite, then restore from the trash gives the old content back (and keeps what it replaced)', async () => {
  const p = file('restore-me.md');
  writeFileSync(p, 'version 1\n');
  await call('read_file', { path: 'restore-me.md' });
  const w = await call('write_file', { path: 'restore-me.md', content: 'version 2\n' });
  const id = /\((t_[a-z0-9]+)\)/.exec(w.output)![1]!;
  const item = getTrashItem(db, id)!;
  assert.is(item.kind, 'file');
  assert.is(item.original, p);
  assert.is(item.name, 'restore-me.md');
  assert.is(readFileSync(p, 'utf8'), 'version 2\n');

  const { result } = restoreFromTrash(db, paths, trashKinds, id, {});
  assert.is(result.restored_to, p);
  assert.is(readFileSync(p, 'utf8'), 'version 1\n');
  assert.not.ok(getTrashItem(db, id), 'the item left the trash');
  // The content it replaced (what write_file wrote) is itself in the trash now.
  const backup = getTrashItem(db, result.backed_up_as as string)!;
  assert.is(backup.original, p);
  const back = restoreFromTrash(db, paths, trashKinds, backup.id, {});
  assert.is(readFileSync(p, 'utf8'), 'version 2\n');
  assert.ok(back.result.backed_up_as);
});

test('restoring over content changed since is a 409 unless restored as new', async () => {
  const p = file('conflict.md');
  writeFileSync(p, 'old\n');
  await call('read_file', { path: 'conflict.md' });
  const w = await call('write_file', { path: 'conflict.md', content: 'mine\n' });
  const id = /\((t_[a-z0-9]+)\)/.exec(w.output)![1]!;
  writeFileSync(p, 'somebody else\n');
  const conflict = thrown(
    () => restoreFromTrash(db, paths, trashKinds, id, {}),
    'restoring over changed content conflicts',
  );
  // What a client reads for it (the gateway maps the store's refusal once, refusalOf).
  assert.is(refusalOf(conflict)?.status, 409);
  assert.is(readFileSync(p, 'utf8'), 'somebody else\n');
  assert.ok(getTrashItem(db, id), 'still in the trash after the conflict');
  const notAName = thrown(
    () => restoreFromTrash(db, paths, trashKinds, id, { new_name: '../escape.md' }),
    'a path is not a name',
  );
  assert.is(refusalOf(notAName)?.status, 400);
  const named = restoreFromTrash(db, paths, trashKinds, id, { new_name: 'conflict.old.md' });
  assert.is(named.result.restored_to, file('conflict.old.md'));
  assert.is(readFileSync(file('conflict.old.md'), 'utf8'), 'old\n');
  assert.is(readFileSync(p, 'utf8'), 'somebody else\n');
});

test('delete_file moves a file to the trash; restore puts it back; folders are refused', async () => {
  const p = file('doomed.txt');
  writeFileSync(p, 'keep me\n');
  chmodSync(p, 0o600);
  await call('read_file', { path: 'doomed.txt' });
  const r = await call('delete_file', { path: 'doomed.txt' });
  assert.not.ok(r.isError, r.output);
  assert.not.ok(existsSync(p));
  assert.not.ok(getFileRead(db, 's_one', p), 'reads of a deleted file are forgotten');
  const id = /\((t_[a-z0-9]+)\)/.exec(r.output)![1]!;
  assert.ok(listTrash(db).some((i) => i.id === id && i.kind === 'file'));
  restoreFromTrash(db, paths, trashKinds, id, {});
  assert.is(readFileSync(p, 'utf8'), 'keep me\n');
  assert.is(statSync(p).mode & 0o777, 0o600);

  mkdirSync(file('a-folder'));
  const folder = await call('delete_file', { path: 'a-folder' });
  assert.ok(folder.isError);
  assert.match(folder.output, /is a folder/);
  assert.ok(existsSync(file('a-folder')));
  assert.match((await call('delete_file', { path: 'not-there' })).output, /does not exist/);

  // A restore as new beside a file that came back meanwhile.
  await call('read_file', { path: 'doomed.txt' });
  const again = await call('delete_file', { path: 'doomed.txt' });
  const id2 = /\((t_[a-z0-9]+)\)/.exec(again.output)![1]!;
  writeFileSync(p, 'a new file with the same name\n');
  const beside = restoreFromTrash(db, paths, trashKinds, id2, { as_new: true });
  assert.match(beside.result.restored_to, /doomed\.restored-\d{8}-\d{6}\.txt$/);
  assert.is(readFileSync(beside.result.restored_to, 'utf8'), 'keep me\n');
  assert.is(readFileSync(p, 'utf8'), 'a new file with the same name\n');
});

test('writing svc files is refused whatever the path looks like', async () => {
  for (const target of [paths.db, join(paths.trashDir, 'x'), join(paths.home, 'run', 'svc.pid')]) {
    const r = await call('write_file', { path: target, content: 'x' });
    assert.ok(r.isError, target);
    assert.match(r.output, /belongs to svc itself/);
  }
  // Through a symlink too.
  symlinkSync(paths.home, file('svc-home-link'));
  const r = await call('write_file', { path: 'svc-home-link/access_key', content: 'x' });
  assert.ok(r.isError);
  assert.is(readFileSync(paths.accessKey, 'utf8'), 'secret-key');
});

test.run();
