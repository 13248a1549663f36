import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  collect,
  createProvider,
  ProviderError,
  type ChatRequest,
  type Message,
  type ProviderOptions,
  type StreamEvent,
} from '../../src/workers/agent/providers/index.js';
import {
  httpError,
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
} from '../fixtures/fake-provider.js';

const KEY = 'sk-ant-test-0123456789';
let fake: FakeProvider;

test.before(async () => {
  fake = await startFakeProvider({ apiKey: KEY });
});
test.after(async () => {
  await fake.close();
});
test.before.each(() => fake.reset());

const fast: ProviderOptions = { retry: { baseDelayMs: 10 } };
const provider = (opts: ProviderOptions = fast, apiKey = KEY) =>
  createProvider({ protocol: 'anthropic', baseUrl: fake.baseUrl('anthropic'), apiKey }, opts);
const ask = (text: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'claude-test',
  messages: [{ role: 'user', content: text }],
  ...extra,
});

async function drain(
  it: AsyncIterable<StreamEvent>,
): Promise<{ events: StreamEvent[]; error?: ProviderError }> {
  const events: StreamEvent[] = [];
  try {
    for await (const ev of it) events.push(ev);
    return { events };
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    return { events, error: err };
  }
}

const texts = (events: StreamEvent[]) => events.flatMap((e) => (e.type === 'text' ? [e.text] : []));

test('streams text deltas in order and ends with done', async () => {
  fake.enqueue({ parts: [{ text: ['Hel', 'lo', ' there'] }] });
  const { events, error } = await drain(provider().stream(ask('hi')));
  assert.is(error, undefined);
  assert.equal(texts(events), ['Hel', 'lo', ' there']);
  assert.equal(events[events.length - 1], {
    type: 'done',
    stopReason: 'end_turn',
    rawStopReason: 'end_turn',
  });
});

test('sends x-api-key and anthropic-version, never an Authorization header, to /v1/messages', async () => {
  fake.enqueue({ parts: [{ text: 'a' }] }, { parts: [{ text: 'b' }] });
  await collect(provider().stream(ask('x')));
  await collect(
    createProvider({ protocol: 'anthropic', baseUrl: `${fake.url}/v1`, apiKey: KEY }).stream(
      ask('x'),
    ),
  );
  for (const req of fake.requests) {
    assert.is(req.path, '/v1/messages');
    assert.is(req.headers['x-api-key'], KEY);
    assert.is(req.headers['anthropic-version'], '2023-06-01');
    assert.is(req.headers.authorization, undefined);
  }
});

test('maps system, images, tool calls and tool results into alternating messages', async () => {
  fake.enqueue({ parts: [{ text: 'ok' }] });
  const messages: Message[] = [
    { role: 'system', content: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Look' },
        { type: 'image', mediaType: 'image/jpeg', data: '/9j/4A==' },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'I should read it.', signature: 'sig-1' },
        { type: 'reasoning', text: 'no signature: from another provider' },
        { type: 'text', text: 'Reading.' },
      ],
      toolCalls: [
        { id: 'toolu_1', name: 'read', arguments: '{"path":"a"}' },
        { id: 'toolu_2', name: 'shot', arguments: '' },
      ],
    },
    { role: 'tool', toolCallId: 'toolu_1', content: 'no such file', isError: true },
    {
      role: 'tool',
      toolCallId: 'toolu_2',
      content: [
        { type: 'text', text: 'screenshot' },
        { type: 'image', url: 'https://x.test/s.png' },
      ],
    },
    { role: 'user', content: 'Go on' },
  ];
  const tools = [
    {
      name: 'read',
      description: 'Reads a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
    },
  ];
  await collect(provider().stream({ model: 'claude-test', messages, tools, maxTokens: 1000 }));
  const body = fake.requests[0]!.body!;
  assert.is(body.model, 'claude-test');
  assert.is(body.stream, true);
  assert.is(body.max_tokens, 1000);
  assert.is(body.thinking, undefined);
  assert.equal(body.system, [
    { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
  ]);
  assert.equal(body.tools, [
    { name: 'read', description: 'Reads a file', input_schema: tools[0]!.parameters },
  ]);
  assert.equal(body.messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Look' },
        { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4A==' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should read it.', signature: 'sig-1' },
        { type: 'text', text: 'Reading.' },
        { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a' } },
        { type: 'tool_use', id: 'toolu_2', name: 'shot', input: {} },
      ],
    },
    {
      // Both tool results and the next user text form one user turn; images sit inside their result.
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'no such file', is_error: true },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_2',
          content: [
            { type: 'text', text: 'screenshot' },
            { type: 'image', source: { type: 'url', url: 'https://x.test/s.png' } },
          ],
        },
        { type: 'text', text: 'Go on', cache_control: { type: 'ephemeral' } },
      ],
    },
  ]);
});

test('reasoning effort becomes a thinking budget, with max_tokens kept above it', async () => {
  const cases: Array<[ChatRequest['reasoningEffort'], number | undefined, unknown, number]> = [
    ['off', 2000, undefined, 2000],
    [undefined, undefined, undefined, 8192],
    ['low', 2000, { type: 'enabled', budget_tokens: 2048 }, 6144],
    ['medium', 64000, { type: 'enabled', budget_tokens: 8192 }, 64000],
    ['high', 4000, { type: 'enabled', budget_tokens: 16384 }, 20480],
    ['max', undefined, { type: 'enabled', budget_tokens: 32000 }, 36096],
  ];
  for (const [effort, maxTokens] of cases) {
    fake.enqueue({ parts: [{ text: 'ok' }] });
    await collect(provider().stream(ask('x', { reasoningEffort: effort, maxTokens })));
  }
  cases.forEach(([effort, , thinking, maxTokens], i) => {
    const body = fake.requests[i]!.body!;
    assert.equal(body.thinking, thinking, `thinking for ${effort}`);
    assert.is(body.max_tokens, maxTokens, `max_tokens for ${effort}`);
    if (thinking)
      assert.ok(
        (body.max_tokens as number) > (thinking as { budget_tokens: number }).budget_tokens,
      );
  });
});

test('thinking streams as reasoning and keeps its signature', async () => {
  fake.enqueue({
    parts: [{ reasoning: ['Consider ', 'this.'], signature: 'EqQBCgIYAhIM' }, { text: 'Answer.' }],
  });
  const { events } = await drain(provider().stream(ask('x', { reasoningEffort: 'low' })));
  assert.equal(
    events.filter((e) => e.type === 'reasoning' || e.type === 'reasoning_end'),
    [
      { type: 'reasoning', text: 'Consider ' },
      { type: 'reasoning', text: 'this.' },
      { type: 'reasoning_end', signature: 'EqQBCgIYAhIM' },
    ],
  );
  fake.enqueue({
    parts: [{ reasoning: ['Consider ', 'this.'], signature: 'EqQBCgIYAhIM' }, { text: 'Answer.' }],
  });
  const c = await collect(provider().stream(ask('x')));
  assert.equal(c.reasoningParts, [
    { type: 'reasoning', text: 'Consider this.', signature: 'EqQBCgIYAhIM' },
  ]);
  assert.is(c.text, 'Answer.');
});

const trickyArgs =
  '{"cmd":"echo \\"a\\\\b\\" | tr a-z A-Z","env":{"LANG":"ü.UTF-8"},"timeout":1.5e3}';

test('tool input JSON split at awkward places is reassembled exactly; two calls keep their order', async () => {
  const frags = [...trickyArgs].reduce<string[]>((acc, ch, i) => {
    // Irregular fragment sizes: 1, 2, 3, 1, 2, 3 ...
    if (i === 0 || acc[acc.length - 1]!.length >= (acc.length % 3) + 1) acc.push(ch);
    else acc[acc.length - 1] += ch;
    return acc;
  }, []);
  assert.is(frags.join(''), trickyArgs);
  const reply: FakeReply = {
    parts: [
      { text: 'Running two.' },
      { toolCall: { id: 'toolu_a', name: 'shell', arguments: frags } },
      { toolCall: { id: 'toolu_b', name: 'shell', arguments: ['{"cmd":', '"ls"}'] } },
    ],
  };
  fake.enqueue(reply);
  const { events } = await drain(provider().stream(ask('x')));
  assert.equal(
    events.filter((e) => e.type === 'tool_call_start'),
    [
      { type: 'tool_call_start', index: 0, id: 'toolu_a', name: 'shell' },
      { type: 'tool_call_start', index: 1, id: 'toolu_b', name: 'shell' },
    ],
  );
  const first = events
    .flatMap((e) => (e.type === 'tool_call_delta' && e.index === 0 ? [e.arguments] : []))
    .join('');
  assert.is(first, trickyArgs);
  fake.enqueue(reply);
  const c = await collect(provider().stream(ask('x')));
  assert.equal(c.toolCalls, [
    { id: 'toolu_a', name: 'shell', arguments: trickyArgs },
    { id: 'toolu_b', name: 'shell', arguments: '{"cmd":"ls"}' },
  ]);
  assert.is(c.stopReason, 'tool_use');
  assert.is(c.rawStopReason, 'tool_use');
});

test('usage with cache reads and cache writes', async () => {
  fake.enqueue({
    parts: [{ text: 'ok' }],
    usage: { input: 12, cachedInput: 4000, cacheWrite: 1500, output: 77 },
  });
  const { events } = await drain(provider().stream(ask('x')));
  assert.equal(
    events.find((e) => e.type === 'usage'),
    { type: 'usage', usage: { input: 12, output: 77, cachedInput: 4000, cacheWrite: 1500 } },
  );
});

test('stop reasons are normalized, the raw one kept', async () => {
  const cases: Array<[FakeReply, string, string]> = [
    [{ parts: [{ text: 'cut' }], stop: 'max_tokens' }, 'max_tokens', 'max_tokens'],
    [{ parts: [{ text: 'x' }], stop: 'stop_sequence' }, 'stop_sequence', 'stop_sequence'],
    [{ parts: [{ text: 'no' }], stop: 'refusal' }, 'refusal', 'refusal'],
    [{ parts: [{ text: 'wait' }], rawStop: 'pause_turn' }, 'other', 'pause_turn'],
    // A gateway that says end_turn after a tool call still asked for the tool.
    [
      { parts: [{ toolCall: { name: 't', arguments: '{}' } }], rawStop: 'end_turn' },
      'tool_use',
      'end_turn',
    ],
  ];
  for (const [script, stop, raw] of cases) {
    fake.enqueue(script);
    const c = await collect(provider().stream(ask('x')));
    assert.is(c.stopReason, stop);
    assert.is(c.rawStopReason, raw);
  }
});

test('non-streamed completion agrees with the streamed one', async () => {
  const reply: FakeReply = {
    parts: [
      { reasoning: 'think', signature: 's1' },
      { text: ['A', 'B'] },
      { toolCall: { id: 'toolu_x', name: 'n', arguments: ['{"k":', '[1,2]}'] } },
    ],
    usage: { input: 3, output: 4, cachedInput: 5, cacheWrite: 6 },
  };
  fake.enqueue(reply, reply);
  const whole = await provider().complete(ask('x'));
  assert.equal(whole, {
    text: 'AB',
    reasoning: 'think',
    reasoningParts: [{ type: 'reasoning', text: 'think', signature: 's1' }],
    toolCalls: [{ id: 'toolu_x', name: 'n', arguments: '{"k":[1,2]}' }],
    usage: { input: 3, output: 4, cachedInput: 5, cacheWrite: 6 },
    stopReason: 'tool_use',
    rawStopReason: 'tool_use',
  });
  assert.is(fake.requests[0]!.body!.stream, false);
  assert.equal(await collect(provider().stream(ask('x'))), whole);
});

test('an error event mid-stream ends the stream with its kind, after the text already sent', async () => {
  fake.enqueue({
    parts: [{ text: 'Half ' }, { error: { type: 'overloaded_error', message: 'Overloaded' } }],
  });
  const { events, error } = await drain(provider().stream(ask('x')));
  assert.equal(texts(events), ['Half ']);
  assert.is(error?.kind, 'overloaded');
  assert.match(error!.message, 'Overloaded');
  assert.is(fake.requests.length, 1, 'output had begun: no retry');
});

test('a wrong key: kind auth, not retried, key not in the message', async () => {
  const wrong = 'sk-ant-wrong-5555555555';
  const { error } = await drain(provider(fast, wrong).stream(ask('x')));
  assert.is(error?.kind, 'auth');
  assert.is(error?.providerType, 'authentication_error');
  assert.not.match(error!.message, wrong);
  assert.is(fake.requests.length, 1);
});

test('an unknown model: kind model_not_found naming the model', async () => {
  fake.enqueue(httpError(404));
  const { error } = await drain(provider().stream(ask('x', { model: 'claude-nope' })));
  assert.is(error?.kind, 'model_not_found');
  assert.match(error!.message, '"claude-nope"');
  assert.is(fake.requests.length, 1);
});

test('a stall after the first event ends with kind "stall"', async () => {
  fake.enqueue({ parts: [{ stall: true }] });
  const { events, error } = await drain(
    provider({ ...fast, stallTimeoutMs: 300 }).stream(ask('x')),
  );
  assert.equal(events, []);
  assert.is(error?.kind, 'stall');
  assert.match(error!.message, '300 ms');
  assert.is(fake.requests.length, 1, 'a stall is not retried');
});

test('cancelling through the AbortSignal ends the stream with kind "cancelled"', async () => {
  fake.enqueue({ parts: [{ text: ['a', 'b', 'c', 'd'] }], delayMs: 150 });
  const ac = new AbortController();
  const { events, error } = await drain(
    (async function* () {
      for await (const ev of provider().stream(ask('x', { signal: ac.signal }))) {
        yield ev;
        if (ev.type === 'text') ac.abort();
      }
    })(),
  );
  assert.equal(texts(events), ['a']);
  assert.is(error?.kind, 'cancelled');
});

test.run();
