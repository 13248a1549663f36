import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/** Uploaded files as turn attachments: an image inline for a model that takes images, a path otherwise. */
let rig: TurnRig;
// A 1×1 PNG: the upload route checks the bytes match the type.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

function upload(
  port: number,
  name: string,
  type: string,
  body: Buffer,
): Promise<{ name: string; mime: string }> {
  const boundary = 'xB0undary7';
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`,
    ),
    body,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/upload',
        headers: {
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': payload.length,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () =>
          res.statusCode === 201
            ? resolve(JSON.parse(text).files[0])
            : reject(new Error(`${res.statusCode} ${text}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

test.before(async () => {
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
});
test.after(async () => {
  await rig.stop();
});

test('an image goes to a model that takes images as an image; a text file goes as a path the agent can read', async () => {
  const image = await upload(rig.port, 'dot.png', 'image/png', PNG);
  assert.is(image.mime, 'image/png');
  const notes = await upload(rig.port, 'notes.txt', 'text/plain', Buffer.from('remember the milk'));
  const session = (await api(rig.port, 'POST', '/api/sessions', {})).body.id as string;

  // Without vision the image is a path too.
  rig.fake.enqueue(textReply('seen'));
  const first = await api(rig.port, 'POST', `/api/chat/${session}/turn`, {
    message: 'look',
    attachments: [image.name, notes.name],
  });
  assert.is(first.body.status, 'completed', JSON.stringify(first.body));
  const blind = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.match(blind, /Attached file: \S*dot\.png/);
  assert.match(blind, /Attached file: \S*notes\.txt/);
  assert.not.match(blind, /data:image\/png;base64/);
  const stored = first.body.messages[0].content;
  assert.equal(
    stored.attachments.map((a: { name: string; mime: string }) => [a.name, a.mime]),
    [
      [image.name, 'image/png'],
      [notes.name, 'text/plain'],
    ],
  );

  // Said to take images, the model gets the picture itself.
  assert.is((await api(rig.port, 'PATCH', '/api/config/models/oa', { vision: true })).status, 200);
  rig.fake.enqueue(textReply('a dot'));
  const second = await api(rig.port, 'POST', `/api/chat/${session}/turn`, {
    message: 'and now?',
    attachments: [image.name],
  });
  assert.is(second.body.status, 'completed', JSON.stringify(second.body));
  const seeing = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.ok(
    seeing.includes(`data:image/png;base64,${PNG.toString('base64')}`),
    'the image is inline',
  );
  assert.match(seeing, /Attached file: \S*notes\.txt/, 'the text file stays a path');
});

test.run();
