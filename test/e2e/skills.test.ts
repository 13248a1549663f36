import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, unzipSync, zipSync, type Zippable } from 'fflate';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import {
  connectWs,
  messagesOf,
  newChat,
  startRig,
  type TurnRig,
  type WsClient,
} from '../helpers/turns.js';
import { getBytes, postMultipart } from '../helpers/zipfile.js';

/**
 * Skills end to end against the real server: the list, toggling (seen by the next turn's system
 * prompt at the fake provider), the skill tool, export → delete → restore from the trash, export →
 * import byte for byte, force and conflicts, and every hostile-archive rule with a crafted zip.
 */

let rig: TurnRig;
let ws: WsClient;
let work: string;
const skillsDir = () => join(rig.server.home, 'skills');

test.before(async () => {
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
  ws = await connectWs(rig.port, ['skills', 'trash']);
  work = mkdtempSync(join(tmpdir(), 'svc-skills-src-'));
});
test.after(async () => {
  ws?.close();
  await rig?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});
test.before.each(() => rig.fake.reset());

const BODY = 'When asked for the weather report, answer with the word BAROMETER first.';

/** A skill folder on disk, outside svc's home, with a script and a nested template. */
function makeSkill(name: string, extra = ''): string {
  const dir = join(work, `${name}-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(join(dir, 'templates'), { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    `---\nname: ${name}\ndescription: Reports the weather in a fixed format${extra}.\n---\n\n${BODY}\n`,
  );
  writeFileSync(join(dir, 'check.sh'), '#!/bin/sh\necho checked\n');
  chmodSync(join(dir, 'check.sh'), 0o755);
  writeFileSync(join(dir, 'templates', 'report.md'), '# Report\n\n- temperature: {{t}}\n');
  writeFileSync(join(dir, 'templates', 'blob.bin'), Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]));
  return dir;
}

/** path → sha256 of every regular file under a folder. */
function hashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      const r = rel ? `${rel}/${n}` : n;
      if (statSync(p).isDirectory()) walk(p, r);
      else out[r] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir, '');
  return out;
}

const importPath = (source: string, force?: boolean) =>
  api(rig.port, 'POST', '/api/skills/import', {
    source,
    ...(force === undefined ? {} : { force }),
  });
const listed = async (name: string) =>
  ((await api(rig.port, 'GET', '/api/skills')).body.items as any[]).find((s) => s.name === name);

/** The system prompt the fake provider got in a request. */
const systemOf = (i: number) => {
  const msgs = rig.fake.requests[i]!.body!.messages as any[];
  return String(msgs.find((m) => m.role === 'system')?.content ?? '');
};

test('the built-in skills are listed, valid and enabled, with file counts and sizes', async () => {
  const res = await api(rig.port, 'GET', '/api/skills');
  assert.is(res.status, 200);
  for (const name of ['svc-config', 'schedule-work', 'connect-channel']) {
    const s = res.body.items.find((x: any) => x.name === name);
    assert.ok(s, `${name} is listed`);
    assert.is(s.source, 'builtin');
    assert.is(s.valid, true, `${name}: ${s.why}`);
    assert.is(s.why, null);
    assert.is(s.enabled, true);
    assert.ok(s.file_count >= 1 && s.size_bytes > 200);
    assert.ok(s.description.length > 20);
  }
  const del = await api(rig.port, 'DELETE', '/api/skills/svc-config');
  assert.is(del.status, 409, 'a built-in cannot be deleted');
  assert.match(del.body.error.message, /disable it/);
  assert.is((await api(rig.port, 'DELETE', '/api/skills/no-such-skill')).status, 404);
  assert.is((await api(rig.port, 'PATCH', '/api/skills/no-such-skill/toggle', {})).status, 404);
});

test('import a folder → listed and announced; export → delete → restore from the trash gives the same files', async () => {
  const src = makeSkill('weather');
  const imp = await importPath(src);
  assert.is(imp.status, 201, JSON.stringify(imp.body));
  assert.is(imp.body.name, 'weather');
  assert.is(imp.body.replaced, null);
  assert.equal(
    imp.body.files.map((f: any) => f.path),
    ['check.sh', 'SKILL.md', 'templates/blob.bin', 'templates/report.md'].sort((a, b) =>
      a.localeCompare(b),
    ),
  );
  await ws.waitEvent(
    (e) => e.topic === 'skills' && e.type === 'skill.created' && e.data.name === 'weather',
    'skill.created',
  );
  const s = await listed('weather');
  assert.is(s.source, 'user');
  assert.is(s.valid, true);
  assert.is(s.file_count, 4);
  const original = hashes(src);
  assert.equal(hashes(join(skillsDir(), 'weather')), original, 'installed byte for byte');
  assert.ok(
    statSync(join(skillsDir(), 'weather', 'check.sh')).mode & 0o100,
    'the script stays executable',
  );

  const exp = await getBytes(rig.port, '/api/skills/weather/export');
  assert.is(exp.status, 200);
  assert.is(exp.headers['content-type'], 'application/zip');
  assert.is(exp.headers['content-disposition'], 'attachment; filename="weather.zip"');
  const entries = unzipSync(new Uint8Array(exp.body));
  assert.equal(Object.keys(entries).sort(), [
    'weather/SKILL.md',
    'weather/check.sh',
    'weather/templates/blob.bin',
    'weather/templates/report.md',
  ]);
  assert.is(
    Buffer.from(entries['weather/templates/blob.bin']!).toString('hex'),
    '00010203fffe0007',
  );

  const del = await api(rig.port, 'DELETE', '/api/skills/weather');
  assert.is(del.status, 200, JSON.stringify(del.body));
  assert.match(del.body.trash_id, /^t_/);
  await ws.waitEvent(
    (e) => e.type === 'skill.deleted' && e.data.name === 'weather',
    'skill.deleted',
  );
  assert.not.ok(existsSync(join(skillsDir(), 'weather')));
  assert.is(await listed('weather'), undefined);
  assert.is((await getBytes(rig.port, '/api/skills/weather/export')).status, 404);
  const trash = (await api(rig.port, 'GET', '/api/trash')).body.items.find(
    (i: any) => i.id === del.body.trash_id,
  );
  assert.is(trash.kind, 'skill');
  assert.is(trash.name, 'weather');

  const back = await api(rig.port, 'POST', `/api/trash/${del.body.trash_id}/restore`, {});
  assert.is(back.status, 200, JSON.stringify(back.body));
  assert.is(back.body.restored_to, 'weather');
  assert.equal(hashes(join(skillsDir(), 'weather')), original, 'restored byte for byte');
  assert.is((await listed('weather')).valid, true);
});

test('export → delete → import the zip (uploaded, then multipart) gives back identical files; a name taken is 409 unless force', async () => {
  const src = makeSkill('packer');
  assert.is((await importPath(src)).status, 201);
  const original = hashes(join(skillsDir(), 'packer'));
  const zip = (await getBytes(rig.port, '/api/skills/packer/export')).body;
  assert.is((await api(rig.port, 'DELETE', '/api/skills/packer')).status, 200);

  const up = await postMultipart(rig.port, '/api/upload', [
    { name: 'file', filename: 'packer.zip', data: zip },
  ]);
  assert.is(up.status, 201, JSON.stringify(up.body));
  const fromUpload = await importPath(up.body.files[0].name);
  assert.is(fromUpload.status, 201, JSON.stringify(fromUpload.body));
  assert.equal(
    hashes(join(skillsDir(), 'packer')),
    original,
    'import of the export is byte-identical',
  );
  const sums = Object.fromEntries(fromUpload.body.files.map((f: any) => [f.path, f.sha256]));
  assert.equal(sums, original, 'the import answers each file with its sha256');

  const again = await postMultipart(rig.port, '/api/skills/import', [
    { name: 'file', filename: 'packer.zip', data: zip },
  ]);
  assert.is(again.status, 409, JSON.stringify(again.body));
  assert.match(again.body.error.message, /force/);

  const forced = await postMultipart(rig.port, '/api/skills/import', [
    { name: 'force', data: 'true' },
    { name: 'file', filename: 'packer.zip', data: zip },
  ]);
  assert.is(forced.status, 201, JSON.stringify(forced.body));
  assert.match(forced.body.replaced, /^t_/, 'the replaced skill went to the trash');
  assert.equal(hashes(join(skillsDir(), 'packer')), original);
  const items = (await api(rig.port, 'GET', '/api/trash')).body.items;
  assert.ok(
    items.some(
      (i: any) => i.id === forced.body.replaced && i.kind === 'skill' && i.name === 'packer',
    ),
  );
  // Restoring the replaced one while the new one holds the name is a conflict with a reason.
  const clash = await api(rig.port, 'POST', `/api/trash/${forced.body.replaced}/restore`, {});
  assert.is(clash.status, 409);
  assert.is(clash.body.error.details.reason, 'original_taken');

  assert.is((await importPath('/no/such/folder')).status, 400);
  assert.is((await importPath('not-an-upload.zip')).status, 400);
  assert.is((await api(rig.port, 'POST', '/api/skills/import', { source: 7 })).status, 400);
  assert.is((await importPath(src, true)).status, 201, 'force over a folder import works too');
});

test('toggling is idempotent with a body, flips without one, and the next turn sees it', async () => {
  assert.is((await importPath(makeSkill('toggler'))).status, 201);
  const id = await newChat(rig.port, {});
  const seen = async () => {
    const from = rig.fake.requests.length;
    const turn = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'hello' });
    assert.is(turn.status, 200, JSON.stringify(turn.body));
    return systemOf(from);
  };
  assert.match(
    await seen(),
    /- toggler: Reports the weather/,
    'an enabled skill is listed in the system prompt',
  );

  const off = await api(rig.port, 'PATCH', '/api/skills/toggler/toggle', { enabled: false });
  assert.is(off.status, 200);
  assert.is(off.body.enabled, false);
  await ws.waitEvent(
    (e) => e.type === 'skill.toggled' && e.data.name === 'toggler' && e.data.enabled === false,
    'skill.toggled',
  );
  assert.is(
    (await api(rig.port, 'PATCH', '/api/skills/toggler/toggle', { enabled: false })).body.enabled,
    false,
    'setting the same state again is idempotent',
  );
  assert.is((await listed('toggler')).enabled, false);
  const prompt = await seen();
  assert.not.match(prompt, /toggler/, 'a disabled skill is not offered');
  assert.match(prompt, /- svc-config:/, 'the others still are');

  const flip = await api(rig.port, 'PATCH', '/api/skills/toggler/toggle');
  assert.is(flip.body.enabled, true, 'no body flips it');
  assert.match(await seen(), /- toggler:/);
  assert.is(
    (await api(rig.port, 'PATCH', '/api/skills/toggler/toggle', { enabled: 'yes' })).status,
    400,
  );
});

test('the skill tool loads a body and a file; a disabled or unknown skill is refused', async () => {
  assert.is((await importPath(makeSkill('loader'))).status, 201);
  const id = await newChat(rig.port, {});
  rig.fake.enqueue(
    {
      parts: [
        { toolCall: { id: 'c1', name: 'skill', arguments: '{"name":"loader"}' } },
        {
          toolCall: {
            id: 'c2',
            name: 'skill',
            arguments: '{"name":"loader","file":"templates/report.md"}',
          },
        },
        {
          toolCall: {
            id: 'c3',
            name: 'skill',
            arguments: '{"name":"loader","file":"../../access_key"}',
          },
        },
      ],
    },
    { parts: [{ text: 'BAROMETER: sunny' }] },
  );
  const turn = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'weather please' });
  assert.is(turn.status, 200, JSON.stringify(turn.body));
  const tools = (await messagesOf(rig.port, id)).filter((m) => m.role === 'tool');
  assert.is(tools.length, 3);
  assert.ok(tools[0].content.output.includes(BODY), 'the body of SKILL.md');
  assert.ok(tools[0].content.output.includes('templates/report.md'), 'and its files');
  assert.not.ok(
    tools[0].content.output.includes('description: Reports'),
    'without the frontmatter',
  );
  assert.ok(tools[1].content.output.includes('- temperature: {{t}}'));
  assert.is(tools[2].content.is_error, true, 'a path out of the skill folder is refused');
  assert.not.ok(tools[2].content.output.includes(rig.server.key()));

  await api(rig.port, 'PATCH', '/api/skills/loader/toggle', { enabled: false });
  rig.fake.enqueue(
    { parts: [{ toolCall: { id: 'c4', name: 'skill', arguments: '{"name":"loader"}' } }] },
    { parts: [{ text: 'ok' }] },
  );
  assert.is(
    (await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'again' })).status,
    200,
  );
  const last = (await messagesOf(rig.port, id)).filter((m) => m.role === 'tool').at(-1);
  assert.is(last.content.is_error, true);
  assert.match(last.content.output, /no enabled skill named "loader"/);
});

test('an invalid skill on disk is listed with its reason and never offered to the model', async () => {
  mkdirSync(join(skillsDir(), 'broken'), { recursive: true });
  writeFileSync(
    join(skillsDir(), 'broken', 'SKILL.md'),
    '---\nname: broken\n---\nno description\n',
  );
  mkdirSync(join(skillsDir(), 'elsewhere'), { recursive: true });
  writeFileSync(
    join(skillsDir(), 'elsewhere', 'SKILL.md'),
    '---\nname: other-name\ndescription: misnamed\n---\n',
  );
  const broken = await listed('broken');
  assert.is(broken.valid, false);
  assert.match(broken.why, /description/);
  assert.match((await listed('elsewhere')).why, /must match/);
  const id = await newChat(rig.port, {});
  const from = rig.fake.requests.length;
  assert.is((await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'hi' })).status, 200);
  assert.not.match(systemOf(from), /broken|misnamed/);
  rmSync(join(skillsDir(), 'broken'), { recursive: true });
  rmSync(join(skillsDir(), 'elsewhere'), { recursive: true });
});

// ---- hostile archives ----

const md = (name: string) => strToU8(`---\nname: ${name}\ndescription: a test skill\n---\nbody\n`);

/**
 * Rewrites one entry's headers (local and central) in a zip: its flags (bit 0 = encrypted) or the
 * uncompressed size it declares. The zip is walked from its end-of-central-directory record.
 */
function patchEntry(
  zip: Uint8Array,
  name: string,
  change: { flags?: number; declaredSize?: number },
): Uint8Array {
  const b = Buffer.from(zip);
  const eocd = b.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = b.readUInt16LE(eocd + 10);
  let at = b.readUInt32LE(eocd + 16);
  let found = false;
  for (let i = 0; i < count; i++) {
    const nameLen = b.readUInt16LE(at + 28);
    const next = at + 46 + nameLen + b.readUInt16LE(at + 30) + b.readUInt16LE(at + 32);
    if (b.subarray(at + 46, at + 46 + nameLen).toString('utf8') === name) {
      const local = b.readUInt32LE(at + 42);
      if (change.flags !== undefined) {
        b.writeUInt16LE(b.readUInt16LE(at + 8) | change.flags, at + 8);
        b.writeUInt16LE(b.readUInt16LE(local + 6) | change.flags, local + 6);
      }
      if (change.declaredSize !== undefined) {
        b.writeUInt32LE(change.declaredSize, at + 24);
        b.writeUInt32LE(change.declaredSize, local + 22);
      }
      found = true;
    }
    at = next;
  }
  if (!found) throw new Error(`no entry ${name} in the zip`);
  return new Uint8Array(b);
}
const UNIX = 3;

const hostile: Array<[string, string, () => Uint8Array]> = [
  [
    'path_escape',
    '../ in a name',
    () => zipSync({ 'SKILL.md': md('evil'), '../escape.txt': strToU8('x') }),
  ],
  [
    'absolute_path',
    'an absolute name',
    () => zipSync({ 'SKILL.md': md('evil'), '/tmp/svc-abs.txt': strToU8('x') }),
  ],
  [
    'drive_letter',
    'a drive letter',
    () => zipSync({ 'SKILL.md': md('evil'), 'C:/evil.txt': strToU8('x') }),
  ],
  [
    'symlink',
    'a symlink entry',
    () =>
      zipSync({
        'SKILL.md': md('evil'),
        link: [strToU8('/etc/passwd'), { os: UNIX, attrs: (0o120777 << 16) >>> 0 }],
      }),
  ],
  [
    'device_file',
    'a character device entry',
    () =>
      zipSync({
        'SKILL.md': md('evil'),
        dev: [strToU8(''), { os: UNIX, attrs: (0o020644 << 16) >>> 0 }],
      }),
  ],
  [
    'too_many_entries',
    '1,001 entries',
    () => {
      const files: Zippable = { 'SKILL.md': md('evil') };
      for (let i = 0; i < 1000; i++) files[`f${i}.txt`] = strToU8(String(i));
      return zipSync(files, { level: 0 });
    },
  ],
  [
    'too_large',
    'more than 64 MiB unpacked',
    () => {
      const files: Zippable = { 'SKILL.md': md('evil') };
      // Random bytes do not compress, so this trips the size rule and not the ratio rule.
      const chunk = new Uint8Array(8 * 1024 * 1024);
      for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 2654435761) >>> 24;
      for (let i = 0; i < 9; i++) files[`part${i}.bin`] = chunk;
      return zipSync(files, { level: 0 });
    },
  ],
  [
    'compression_ratio',
    'a 1 MiB file of zeros (about 1000:1)',
    () =>
      zipSync({ 'SKILL.md': md('evil'), 'zeros.bin': new Uint8Array(1024 * 1024) }, { level: 9 }),
  ],
  ['skill_md_missing', 'no SKILL.md', () => zipSync({ 'README.md': strToU8('hi') })],
  [
    'skill_md_missing',
    'SKILL.md two folders down',
    () => zipSync({ a: { b: { 'SKILL.md': md('evil') } } }),
  ],
  ['unsafe_name', 'an unsafe name', () => zipSync({ 'SKILL.md': md('../Evil Name') })],
  ['not_a_zip', 'random bytes', () => strToU8('this is not a zip archive at all')],
  [
    'path_escape',
    '..\\ with backslashes',
    () => zipSync({ 'SKILL.md': md('evil'), '..\\escape.txt': strToU8('x') }),
  ],
  [
    'absolute_path',
    'a name starting with a backslash',
    () => zipSync({ 'SKILL.md': md('evil'), '\\evil.txt': strToU8('x') }),
  ],
  [
    'drive_letter',
    'a drive letter with a backslash',
    () => zipSync({ 'SKILL.md': md('evil'), 'C:\\evil.txt': strToU8('x') }),
  ],
  [
    'path_escape',
    'a NUL byte in a name',
    () => zipSync({ 'SKILL.md': md('evil'), 'a\u0000b.txt': strToU8('x') }),
  ],
  [
    'skill_md_missing',
    'two top-level folders',
    () => zipSync({ a: { 'SKILL.md': md('evil') }, b: { 'SKILL.md': md('other') } }),
  ],
  [
    'invalid_skill_md',
    'SKILL.md without a description',
    () => zipSync({ 'SKILL.md': strToU8('---\nname: evil\n---\nbody\n') }),
  ],
  [
    'encrypted',
    'an entry flagged as encrypted',
    () =>
      patchEntry(
        zipSync(
          { 'SKILL.md': md('evil'), 'secret.txt': strToU8('a secret, deflated') },
          { level: 9 },
        ),
        'secret.txt',
        { flags: 1 },
      ),
  ],
];

for (const [rule, what, make] of hostile) {
  test(`hostile archive refused with 400 (${rule}): ${what}; nothing is written`, async () => {
    const before = existsSync(skillsDir()) ? readdirSync(skillsDir()).sort() : [];
    const res = await postMultipart(rig.port, '/api/skills/import', [
      { name: 'file', filename: 'evil.zip', data: Buffer.from(make()) },
    ]);
    assert.is(res.status, 400, JSON.stringify(res.body));
    assert.is(res.body.error.code, 'invalid_request');
    assert.is(res.body.error.details.rule, rule);
    assert.ok(res.body.error.message.includes(rule), 'the message names the rule');
    const after = existsSync(skillsDir()) ? readdirSync(skillsDir()).sort() : [];
    assert.equal(after, before, 'no folder, staging folder or temp file is left');
    assert.not.ok(existsSync('/tmp/svc-abs.txt'));
    assert.not.ok(existsSync(join(rig.server.home, 'escape.txt')));
  });
}

test('a header that lies about its size is caught while unpacking; the files already unpacked are removed', async () => {
  // SKILL.md and a.txt unpack first; b.bin declares 5,000 bytes (a 50:1 ratio, within the rules)
  // and inflates to 200 KiB, so the refusal comes after files were written to the staging folder.
  const zip = patchEntry(
    zipSync(
      {
        'SKILL.md': md('liar'),
        'a.txt': strToU8('first file\n'),
        'b.bin': new Uint8Array(200 * 1024),
      },
      { level: 9 },
    ),
    'b.bin',
    { declaredSize: 5000 },
  );
  const before = readdirSync(skillsDir()).sort();
  const res = await postMultipart(rig.port, '/api/skills/import', [
    { name: 'file', filename: 'liar.zip', data: Buffer.from(zip) },
  ]);
  assert.is(res.status, 400, JSON.stringify(res.body));
  assert.is(res.body.error.details.rule, 'not_a_zip');
  assert.match(res.body.error.message, /b\.bin/);
  assert.equal(
    readdirSync(skillsDir()).sort(),
    before,
    'no skill folder and no staging folder is left',
  );
  assert.is(await listed('liar'), undefined);
});

test('a zip by its absolute path imports like an upload; a forced import over it is announced as updated', async () => {
  assert.is((await importPath(makeSkill('zipped'))).status, 201);
  const original = hashes(join(skillsDir(), 'zipped'));
  const zipFile = join(work, 'zipped-export.zip');
  writeFileSync(zipFile, (await getBytes(rig.port, '/api/skills/zipped/export')).body);
  assert.is((await api(rig.port, 'DELETE', '/api/skills/zipped')).status, 200);
  const imp = await importPath(zipFile);
  assert.is(imp.status, 201, JSON.stringify(imp.body));
  assert.equal(
    hashes(join(skillsDir(), 'zipped')),
    original,
    'byte-identical through a zip on disk',
  );
  const forced = await importPath(zipFile, true);
  assert.is(forced.status, 201);
  await ws.waitEvent(
    (e) => e.topic === 'skills' && e.type === 'skill.updated' && e.data.name === 'zipped',
    'skill.updated',
  );
  await ws.waitEvent(
    (e) => e.topic === 'trash' && e.type === 'trash.added' && e.data.id === forced.body.replaced,
    'trash.added for the replaced copy',
  );
});

test('a skill changed on disk, added by hand or deleted is seen by the next turn without a restart', async () => {
  assert.is((await importPath(makeSkill('changing'))).status, 201);
  const id = await newChat(rig.port, {});
  const seen = async () => {
    const from = rig.fake.requests.length;
    assert.is(
      (await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'hello' })).status,
      200,
    );
    return systemOf(from);
  };
  assert.match(await seen(), /- changing: Reports the weather in a fixed format\./);
  writeFileSync(
    join(skillsDir(), 'changing', 'SKILL.md'),
    '---\nname: changing\ndescription: Now explains tides instead.\n---\nTIDES\n',
  );
  mkdirSync(join(skillsDir(), 'by-hand'));
  writeFileSync(
    join(skillsDir(), 'by-hand', 'SKILL.md'),
    '---\nname: by-hand\ndescription: Copied into the folder by hand.\n---\nbody\n',
  );
  const changed = await seen();
  assert.match(changed, /- changing: Now explains tides instead\./, 'the new description');
  assert.not.match(changed, /- changing: Reports/, 'not the old one');
  assert.match(changed, /- by-hand: Copied into the folder by hand\./, 'a folder added by hand');
  assert.is((await api(rig.port, 'DELETE', '/api/skills/changing')).status, 200);
  assert.is((await api(rig.port, 'DELETE', '/api/skills/by-hand')).status, 200);
  const gone = await seen();
  assert.not.match(gone, /- changing:/);
  assert.not.match(gone, /- by-hand:/);
});

test('with many skills the system prompt lists a bounded number and says how many were left out', async () => {
  // The cap is SKILLS_LISTED (50) in src/workers/agent/prompt.ts; 60 skills on disk are over it.
  const made = Array.from({ length: 60 }, (_, i) => `many-${String(i).padStart(2, '0')}`);
  for (const name of made) {
    mkdirSync(join(skillsDir(), name), { recursive: true });
    writeFileSync(
      join(skillsDir(), name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Filler skill number ${name}.\n---\nbody\n`,
    );
  }
  try {
    const usable = ((await api(rig.port, 'GET', '/api/skills')).body.items as any[]).filter(
      (s) => s.enabled && s.valid,
    );
    assert.ok(
      usable.length >= 63,
      `the 60 fillers and the built-ins are usable (${usable.length})`,
    );
    const id = await newChat(rig.port, {});
    const from = rig.fake.requests.length;
    assert.is((await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'hi' })).status, 200);
    const section = systemOf(from).split('# Skills\n')[1]?.split('\n\n')[0] ?? '';
    const listedLines = section.split('\n').filter((l) => /^- [a-z0-9-]+: /.test(l));
    assert.is(listedLines.length, 50, 'exactly the cap is listed by name and description');
    assert.ok(
      section.includes(`- (${usable.length - 50} more skills not listed)`),
      `the rest are counted: ${section.split('\n').at(-1)}`,
    );
    assert.ok(
      listedLines.every((l) => usable.some((s) => l.startsWith(`- ${s.name}: `))),
      'only usable skills are listed',
    );
  } finally {
    for (const name of made) rmSync(join(skillsDir(), name), { recursive: true, force: true });
  }
});

test('a folder import with a symlink or without SKILL.md is refused the same way', async () => {
  const withLink = makeSkill('linked');
  symlinkSync('/etc/hostname', join(withLink, 'link'));
  const res = await importPath(withLink);
  assert.is(res.status, 400);
  assert.is(res.body.error.details.rule, 'symlink');
  const empty = mkdtempSync(join(work, 'empty-'));
  assert.is((await importPath(empty)).body.error.details.rule, 'skill_md_missing');
  assert.is(await listed('linked'), undefined);
});

test.run();
