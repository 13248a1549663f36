import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
} from 'node:fs';
import { unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeChunks } from '../../src/shared/write-chunks.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-write-chunks-'));

/** Paths this process holds open, read from /proc (Linux). */
function openPaths(): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      out.push(readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // closed while listed
    }
  }
  return out;
}

test('writes every chunk, answers the size, makes the file with the mode asked', async () => {
  const path = join(dir, 'ok.part');
  async function* chunks() {
    yield Buffer.from('hello ');
    yield new Uint8Array(Buffer.from('world'));
  }
  assert.is(await writeChunks(path, chunks(), { mode: 0o600 }), 11);
  assert.is(readFileSync(path, 'utf8'), 'hello world');
  assert.is(statSync(path).mode & 0o777, 0o600);
  assert.not.ok(openPaths().includes(path), 'closed once it settles');
});

test('"wx" refuses a file that exists; "w" replaces it', async () => {
  const path = join(dir, 'ok.part');
  const one = async function* () {
    yield Buffer.from('x');
  };
  const err = await writeChunks(path, one(), { mode: 0o600 }).catch((e: unknown) => e);
  assert.is((err as NodeJS.ErrnoException).code, 'EEXIST');
  assert.is(await writeChunks(path, one(), { mode: 0o600, flags: 'w' }), 1);
  assert.is(readFileSync(path, 'utf8'), 'x');
});

// The defect this replaced: pipeline(source, createWriteStream(path)) rejected while the stream
// was still opening its file, so a caller that removed the file on failure found it back later.
test('a source that fails: once the promise settles the file exists and is closed, so removing it is final', async () => {
  for (let i = 0; i < 50; i++) {
    const path = join(dir, `bad-${i}.part`);
    async function* failing() {
      if (i % 2) yield Buffer.from('some bytes');
      throw new Error('the body was malformed');
    }
    const err = await writeChunks(path, failing(), { mode: 0o600 }).catch((e: unknown) => e);
    assert.is((err as Error).message, 'the body was malformed');
    assert.ok(existsSync(path), `attempt ${i}: the file was made before the first chunk`);
    assert.not.ok(openPaths().includes(path), `attempt ${i}: no descriptor left open`);
    await unlink(path);
  }
  assert.equal(
    readdirSync(dir).filter((n) => n.startsWith('bad-')),
    [],
  );
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

test.run();
