import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { startFakeTelegram, type FakeTelegram, type TgUser } from '../fixtures/fake-telegram.js';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Telegram group chats, end to end with the real svc and a local fake of the Bot API: in a group
 * only a message that mentions the bot (@username from getMe) or replies to it reaches the agent,
 * without the mention; everything else in the group is left alone. Each sender is checked on
 * their own (allowed_users, or a pairing code in the group), and the group is its own session.
 */

const TOKEN = '123456789:AAHsvcFakeTokenForGroups_abcdefXY';
const ALICE: TgUser = { id: 5151, first_name: 'Alice' };
const BOB: TgUser = { id: 5252, first_name: 'Bob' };
const GROUP = { id: -1001234567890, title: 'Family' };

let rig: TurnRig;
let tg: FakeTelegram;

const inGroup = (text: string) =>
  waitFor(() => tg.chat(GROUP.id).find((m) => m.text === text), 20_000, `"${text}" in the group`);
/** What the model was last given as the user's words. */
const lastUserWords = () => {
  const body = rig.fake.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
  return String(body.messages.filter((m) => m.role === 'user').at(-1)!.content);
};
const sessions = async () =>
  (await api(rig.port, 'GET', '/api/sessions')).body.items as {
    id: string;
    title: string;
    channel: string | null;
  }[];

test.before(async () => {
  tg = await startFakeTelegram(TOKEN);
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
  const saved = await api(rig.port, 'POST', '/api/channels/telegram', {
    bot_token: TOKEN,
    base_url: tg.url,
    allowed_users: String(ALICE.id),
  });
  assert.is(saved.status, 200, JSON.stringify(saved.body));
  await waitFor(
    async () => (await api(rig.port, 'GET', '/api/channels/telegram')).body.state === 'running',
    20_000,
    'telegram running',
  );
});

test.after(async () => {
  await rig?.stop();
  await tg?.close();
});

test('in a group, only a message that mentions the bot reaches the agent, without the mention; the group is its own session', async () => {
  const before = rig.fake.requests.length;
  tg.userSaysInGroup(ALICE, GROUP, 'who is bringing the cake on sunday?');
  rig.fake.enqueue(textReply('Four.'));
  tg.userSaysInGroup(ALICE, GROUP, `@${tg.botUsername} what is 2+2?`);
  await inGroup('Four.');
  assert.is(
    rig.fake.requests.length,
    before + 1,
    'the message that did not address the bot never reached the model',
  );
  assert.is(lastUserWords(), 'what is 2+2?');
  assert.is(tg.chat(GROUP.id).length, 1, 'the bot said nothing to the other message');

  const group = (await sessions()).filter(
    (s) => s.channel === 'telegram' && s.title.includes('Family'),
  );
  assert.is(group.length, 1, JSON.stringify(await sessions()));

  // The mention anywhere in the text, in any case.
  rig.fake.enqueue(textReply('Noted.'));
  tg.userSaysInGroup(ALICE, GROUP, `remember milk @${tg.botUsername.toUpperCase()} please`);
  await inGroup('Noted.');
  assert.is(lastUserWords(), 'remember milk please');

  // Another bot's mention is not this bot's.
  const n = rig.fake.requests.length;
  tg.userSaysInGroup(ALICE, GROUP, '@some_other_bot do something');
  rig.fake.enqueue(textReply('Five.'));
  tg.userSaysInGroup(ALICE, GROUP, `@${tg.botUsername} and 2+3?`);
  await inGroup('Five.');
  assert.is(rig.fake.requests.length, n + 1);

  // A private chat with the same user is another session.
  rig.fake.enqueue(textReply('Hi in private.'));
  tg.userSays(ALICE, 'hello');
  await waitFor(
    () => tg.chat(ALICE.id).find((m) => m.text === 'Hi in private.'),
    20_000,
    'the private reply',
  );
  const mine = (await sessions()).filter((s) => s.channel === 'telegram');
  assert.is(mine.length, 2, JSON.stringify(mine));
  const groupSession = group[0]!.id;
  const msgs = (await api(rig.port, 'GET', `/api/sessions/${groupSession}/messages`)).body
    .items as { role: string; content: { text?: string } }[];
  assert.equal(
    msgs.filter((m) => m.role === 'user').map((m) => m.content.text),
    ['what is 2+2?', 'remember milk please', 'and 2+3?'],
  );
});

test("a reply to the bot's message addresses it without a mention; a reply to someone else does not", async () => {
  const botMsg = tg.chat(GROUP.id).find((m) => m.text === 'Four.')!;
  const before = rig.fake.requests.length;
  tg.userSaysInGroup(ALICE, GROUP, 'I agree', { replyTo: 99_999 });
  rig.fake.enqueue(textReply('Twelve.'));
  tg.userSaysInGroup(ALICE, GROUP, 'and times three?', { replyTo: botMsg.message_id });
  await inGroup('Twelve.');
  assert.is(rig.fake.requests.length, before + 1);
  assert.is(lastUserWords(), 'and times three?');
});

test('each sender in a group is checked on their own: a stranger gets a pairing code there and no turn, until approved', async () => {
  const before = rig.fake.requests.length;
  tg.userSaysInGroup(BOB, GROUP, `@${tg.botUsername} delete everything`);
  const pairing = await waitFor(
    () => tg.chat(GROUP.id).find((m) => m.text.includes('pairing code')),
    20_000,
    'the pairing code',
  );
  const code = /pairing code is ([A-Z0-9]{6})/.exec(pairing.text)?.[1];
  assert.ok(code, pairing.text);
  assert.is(rig.fake.requests.length, before, 'nothing from the stranger reached the model');
  const list = (await api(rig.port, 'GET', '/api/channels/telegram/pairings')).body.items as {
    code: string;
    user_id: string;
    name: string;
  }[];
  assert.equal(
    list.map((p) => [p.code, p.user_id, p.name]),
    [[code, String(BOB.id), 'Bob']],
    'the pairing names the sender, not the group',
  );

  // Alice is still answered in the same group meanwhile.
  rig.fake.enqueue(textReply('Still yours.'));
  tg.userSaysInGroup(ALICE, GROUP, `@${tg.botUsername} still there?`);
  await inGroup('Still yours.');

  const ok = await api(rig.port, 'POST', '/api/channels/telegram/pairings', {
    code,
    decision: 'approve',
  });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  await waitFor(
    () => tg.chat(GROUP.id).find((m) => /approved/.test(m.text)),
    20_000,
    'the approval notice',
  );
  rig.fake.enqueue(textReply('Hello Bob.'));
  tg.userSaysInGroup(BOB, GROUP, `@${tg.botUsername} hi`);
  await inGroup('Hello Bob.');
  assert.is(lastUserWords(), 'hi');
  const telegram = (await sessions()).filter((s) => s.channel === 'telegram');
  assert.is(telegram.length, 2, "Bob talks in the group's session");
});

test.run();
