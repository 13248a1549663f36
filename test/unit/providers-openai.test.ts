import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
import { httpError, startFakeProvider, type FakeProvider } from '../fixtures/fake-provider.js';
import { waitFor } from '../helpers/server.js';

const KEY = 'sk-test-0123456789abcdef';
let fake: FakeProvider;

test.before(async () => {
  fake = await startFakeProvider({ apiKey: KEY });
});
test.after(async () => {
  await fake.close();
});
test.before.each(() => fake.reset());

const fast: ProviderOptions = { retry: { baseDelayMs: 10 } };
const provider = (opts: ProviderOptions = fast, providerId?: string, apiKey = KEY) =>
  createProvider({ protocol: 'openai', baseUrl: fake.baseUrl('openai'), apiKey, providerId }, opts);
const ask = (text: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'gpt-test',
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
const last = <T>(xs: T[]) => xs[xs.length - 1];

test('streams text deltas in order and ends with done', async () => {
  fake.enqueue({ parts: [{ text: ['Hel', 'lo', ', wor', 'ld'] }] });
  const { events, error } = await drain(provider().stream(ask('hi')));
  assert.is(error, undefined);
  assert.equal(texts(events), ['Hel', 'lo', ', wor', 'ld']);
  assert.equal(last(events), { type: 'done', stopReason: 'end_turn', rawStopReason: 'stop' });
});

test('sends model, messages, tools, stream options and the key as a Bearer header', async () => {
  fake.enqueue({ parts: [{ text: 'ok' }] });
  const messages: Message[] = [
    { role: 'system', content: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this?' },
        { type: 'image', mediaType: 'image/png', data: 'iVBORw0=' },
      ],
    },
    {
      role: 'assistant',
      content: 'Let me look.',
      toolCalls: [{ id: 'call_1', name: 'read', arguments: '{"path":"a.txt"}' }],
    },
    {
      role: 'tool',
      toolCallId: 'call_1',
      content: [
        { type: 'text', text: 'file body' },
        { type: 'image', url: 'https://x.test/a.png' },
      ],
    },
    { role: 'user', content: 'Thanks' },
  ];
  const tools = [
    {
      name: 'read',
      description: 'Reads a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  ];
  const p = createProvider(
    {
      protocol: 'openai',
      baseUrl: fake.baseUrl('openai'),
      apiKey: KEY,
      providerId: 'openai',
      extraHeaders: { 'X-Title': 'svc' },
    },
    fast,
  );
  await drain(
    p.stream({ model: 'gpt-test', messages, tools, maxTokens: 321, reasoningEffort: 'high' }),
  );
  const req = fake.requests[0]!;
  assert.is(req.headers['x-title'], 'svc');
  assert.is(req.path, '/v1/chat/completions');
  assert.is(req.headers.authorization, `Bearer ${KEY}`);
  assert.is(req.headers['x-api-key'], undefined);
  assert.is(req.body?.model, 'gpt-test');
  assert.is(req.body?.stream, true);
  assert.equal(req.body?.stream_options, { include_usage: true });
  assert.is(req.body?.max_completion_tokens, 321);
  assert.is(req.body?.reasoning_effort, 'high');
  assert.equal(req.body?.tools, [{ type: 'function', function: tools[0] }]);
  assert.equal(req.body?.messages, [
    { role: 'system', content: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0=' } },
      ],
    },
    {
      role: 'assistant',
      content: 'Let me look.',
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'read', arguments: '{"path":"a.txt"}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'file body' },
    // A tool message cannot carry an image: it follows as a user message.
    { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/a.png' } }] },
    { role: 'user', content: 'Thanks' },
  ]);
});

test('a bare-origin base URL gets /v1; a base with a path keeps it', async () => {
  fake.enqueue({ parts: [{ text: 'a' }] }, { parts: [{ text: 'b' }] });
  await collect(
    createProvider({ protocol: 'openai', baseUrl: fake.url, apiKey: KEY }).stream(ask('x')),
  );
  await collect(
    createProvider({
      protocol: 'openai',
      baseUrl: `${fake.url}/compatible-mode/v1/`,
      apiKey: KEY,
    }).stream(ask('x')),
  );
  assert.equal(
    fake.requests.map((r) => r.path),
    ['/v1/chat/completions', '/compatible-mode/v1/chat/completions'],
  );
});

test('reasoning deltas arrive before the answer and are kept apart from it', async () => {
  fake.enqueue({ parts: [{ reasoning: ['The user ', 'greets.'] }, { text: ['Hi', '!'] }] });
  const { events } = await drain(provider().stream(ask('hello')));
  const kinds = events
    .filter((e) => e.type === 'reasoning' || e.type === 'text')
    .map((e) => `${e.type}:${'text' in e ? e.text : ''}`);
  assert.equal(kinds, ['reasoning:The user ', 'reasoning:greets.', 'text:Hi', 'text:!']);
  fake.enqueue({ parts: [{ reasoning: ['The user ', 'greets.'] }, { text: ['Hi', '!'] }] });
  const c = await collect(provider().stream(ask('hello')));
  assert.is(c.reasoning, 'The user greets.');
  assert.is(c.text, 'Hi!');
});

const trickyArgs =
  '{"path":"/tmp/a b.txt","content":"line1\\nline2 \\"quoted\\" ünï€ode 🙂","n":[1,2.5,-3e2],"ok":true}';

test('tool-call arguments split at awkward places are reassembled exactly', async () => {
  // Split inside keys, escapes, numbers and multi-byte characters, one character per fragment at the end.
  const cuts = [1, 2, 7, 19, 20, 33, 34, 46, 47, 60, 61, 62];
  const frags: string[] = [];
  let at = 0;
  for (const c of cuts) {
    frags.push(trickyArgs.slice(at, c));
    at = c;
  }
  for (const ch of trickyArgs.slice(at)) frags.push(ch);
  assert.is(frags.join(''), trickyArgs);
  fake.enqueue({
    parts: [
      { text: 'Writing.' },
      { toolCall: { id: 'call_w', name: 'write_file', arguments: frags } },
    ],
  });
  const { events } = await drain(provider().stream(ask('write it')));
  const deltas = events
    .flatMap((e) => (e.type === 'tool_call_delta' ? [e.arguments] : []))
    .join('');
  assert.is(deltas, trickyArgs);
  const end = events.find((e) => e.type === 'tool_call_end');
  assert.equal(end, {
    type: 'tool_call_end',
    index: 0,
    id: 'call_w',
    name: 'write_file',
    arguments: trickyArgs,
  });
  assert.equal(JSON.parse(trickyArgs), JSON.parse((end as { arguments: string }).arguments));
  assert.equal(last(events), { type: 'done', stopReason: 'tool_use', rawStopReason: 'tool_calls' });
});

test('two tool calls in one reply keep their own ids, names, indexes and arguments', async () => {
  fake.enqueue({
    parts: [
      { toolCall: { id: 'call_a', name: 'read', arguments: ['{"pa', 'th":"a"}'] } },
      { toolCall: { id: 'call_b', name: 'grep', arguments: ['{"q":', '"x"', '}'] } },
    ],
  });
  const { events } = await drain(provider().stream(ask('go')));
  const starts = events.filter((e) => e.type === 'tool_call_start');
  assert.equal(starts, [
    { type: 'tool_call_start', index: 0, id: 'call_a', name: 'read' },
    { type: 'tool_call_start', index: 1, id: 'call_b', name: 'grep' },
  ]);
  fake.enqueue({
    parts: [
      { toolCall: { id: 'call_a', name: 'read', arguments: ['{"pa', 'th":"a"}'] } },
      { toolCall: { id: 'call_b', name: 'grep', arguments: ['{"q":', '"x"', '}'] } },
    ],
  });
  const c = await collect(provider().stream(ask('go')));
  assert.equal(c.toolCalls, [
    { id: 'call_a', name: 'read', arguments: '{"path":"a"}' },
    { id: 'call_b', name: 'grep', arguments: '{"q":"x"}' },
  ]);
  assert.is(c.stopReason, 'tool_use');
});

test('a tool call with no arguments gets "{}"', async () => {
  fake.enqueue({ parts: [{ toolCall: { name: 'now', arguments: [] } }] });
  const c = await collect(provider().stream(ask('time?')));
  assert.equal(c.toolCalls, [{ id: 'call_fake0', name: 'now', arguments: '{}' }]);
});

test('usage with cached and reasoning tokens, in disjoint buckets', async () => {
  fake.enqueue({
    parts: [{ text: 'ok' }],
    usage: { input: 120, cachedInput: 880, output: 64, reasoning: 40 },
  });
  const { events } = await drain(provider().stream(ask('x')));
  const usage = events.find((e) => e.type === 'usage');
  assert.equal(usage, {
    type: 'usage',
    usage: { input: 120, output: 64, cachedInput: 880, cacheWrite: 0, reasoning: 40 },
  });
  // Usage comes once, right before done.
  assert.is(events[events.length - 2]?.type, 'usage');
});

test('stop reasons are normalized, the raw one kept', async () => {
  const cases: Array<[Parameters<FakeProvider['enqueue']>[0], string, string]> = [
    [{ parts: [{ text: 'cut' }], stop: 'max_tokens' }, 'max_tokens', 'length'],
    [{ parts: [{ text: 'no' }], stop: 'refusal' }, 'refusal', 'content_filter'],
    [{ parts: [{ text: 'odd' }], rawStop: 'something_new' }, 'other', 'something_new'],
    // A server that says "stop" after a tool call still asked for the tool.
    [
      { parts: [{ toolCall: { name: 't', arguments: '{}' } }], rawStop: 'stop' },
      'tool_use',
      'stop',
    ],
  ];
  for (const [script, stop, raw] of cases) {
    fake.enqueue(script);
    const c = await collect(provider().stream(ask('x')));
    assert.is(c.stopReason, stop);
    assert.is(c.rawStopReason, raw);
  }
});

test('non-streamed completion: text, reasoning, tool calls, usage; no stream options sent', async () => {
  fake.enqueue({
    parts: [
      { reasoning: 'hmm' },
      { text: ['Two ', 'calls.'] },
      { toolCall: { id: 'c1', name: 'a', arguments: '{"x":1}' } },
      { toolCall: { id: 'c2', name: 'b', arguments: ['{"y"', ':2}'] } },
    ],
    usage: { input: 5, cachedInput: 3, output: 7 },
  });
  const c = await provider().complete(ask('x', { maxTokens: 100 }));
  assert.equal(c, {
    text: 'Two calls.',
    reasoning: 'hmm',
    reasoningParts: [{ type: 'reasoning', text: 'hmm' }],
    toolCalls: [
      { id: 'c1', name: 'a', arguments: '{"x":1}' },
      { id: 'c2', name: 'b', arguments: '{"y":2}' },
    ],
    usage: { input: 5, output: 7, cachedInput: 3, cacheWrite: 0, reasoning: 0 },
    stopReason: 'tool_use',
    rawStopReason: 'tool_calls',
  });
  const body = fake.requests[0]!.body!;
  assert.is(body.stream, false);
  assert.is(body.stream_options, undefined);
  assert.is(body.max_tokens, 100);
});

test('a streamed and a non-streamed reply to the same script agree', async () => {
  const script = {
    parts: [
      { reasoning: ['a', 'b'] },
      { text: ['c', 'd'] },
      { toolCall: { id: 'k', name: 'n', arguments: ['{"z"', ':[1]}'] } },
    ],
    usage: { input: 1, output: 2, cachedInput: 3 },
  };
  fake.enqueue(script, script);
  assert.equal(await collect(provider().stream(ask('x'))), await provider().complete(ask('x')));
});

test('a mid-stream error ends the stream with a ProviderError after the text already sent', async () => {
  fake.enqueue({
    parts: [
      { text: 'Partial ' },
      { error: { type: 'server_error', message: 'The model crashed.' } },
    ],
  });
  const { events, error } = await drain(provider().stream(ask('x')));
  assert.equal(texts(events), ['Partial ']);
  assert.instance(error, ProviderError);
  assert.is(error!.kind, 'server');
  assert.match(error!.message, 'The model crashed.');
  assert.is(fake.requests.length, 1, 'output had begun: no retry');
});

test('a connection cut after output began is a network error and is not retried', async () => {
  fake.enqueue({ parts: [{ text: 'Hel' }, { drop: true }] });
  const { events, error } = await drain(provider().stream(ask('x')));
  assert.equal(texts(events), ['Hel']);
  assert.is(error?.kind, 'network');
  assert.is(fake.requests.length, 1);
});

test('reasoning effort per dialect', async () => {
  const cases: Array<
    [string | undefined, ChatRequest['reasoningEffort'], Record<string, unknown>]
  > = [
    ['openai', 'max', { reasoning_effort: 'xhigh' }],
    ['openai', 'off', {}],
    [undefined, 'xhigh', { reasoning_effort: 'high' }],
    [undefined, 'low', { reasoning_effort: 'low' }],
    ['openrouter', 'medium', { reasoning: { effort: 'medium' } }],
    ['openrouter', 'off', { reasoning: { effort: 'none' } }],
    ['deepseek', 'off', { thinking: { type: 'disabled' } }],
    ['deepseek', 'medium', { thinking: { type: 'enabled' }, reasoning_effort: 'high' }],
    ['qwen', 'off', { enable_thinking: false }],
    ['qwen', 'low', { enable_thinking: true }],
    ['moonshot', 'off', { thinking: { type: 'disabled' } }],
    ['gemini', 'max', { reasoning_effort: 'high' }],
    ['openai', undefined, {}],
  ];
  const fields = ['reasoning_effort', 'reasoning', 'thinking', 'enable_thinking'];
  for (const [id, effort] of cases) {
    fake.enqueue({ parts: [{ text: 'ok' }] });
    await collect(provider(fast, id).stream(ask('x', { reasoningEffort: effort })));
  }
  cases.forEach(([id, effort, want], i) => {
    const body = fake.requests[i]!.body!;
    const got = Object.fromEntries(fields.filter((f) => f in body).map((f) => [f, body[f]]));
    assert.equal(got, want, `${id ?? 'generic'} / ${effort}`);
  });
});

test('DeepSeek gets earlier reasoning back on assistant messages; OpenAI does not', async () => {
  const messages: Message[] = [
    { role: 'user', content: 'q1' },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'thought' },
        { type: 'text', text: '' },
      ],
      toolCalls: [{ id: 'c', name: 't', arguments: '' }],
    },
    { role: 'tool', toolCallId: 'c', content: 'r' },
    { role: 'assistant', content: 'a2' },
    { role: 'user', content: 'q2' },
  ];
  fake.enqueue({ parts: [{ text: 'ok' }] }, { parts: [{ text: 'ok' }] });
  await collect(provider(fast, 'deepseek').stream({ model: 'm', messages }));
  await collect(provider(fast, 'openai').stream({ model: 'm', messages }));
  const assistants = (i: number) =>
    (fake.requests[i]!.body!.messages as Array<Record<string, unknown>>).filter(
      (m) => m.role === 'assistant',
    );
  assert.equal(assistants(0), [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 't', arguments: '{}' } }],
      reasoning_content: 'thought',
    },
    { role: 'assistant', content: 'a2', reasoning_content: '' },
  ]);
  assert.ok(assistants(1).every((m) => !('reasoning_content' in m)));
});

test('a stream that stalls ends with kind "stall" after the stall timeout', async () => {
  fake.enqueue({ parts: [{ text: 'Hel' }, { stall: true }] });
  const { events, error } = await drain(
    provider({ ...fast, stallTimeoutMs: 300 }).stream(ask('x')),
  );
  assert.equal(texts(events), ['Hel']);
  assert.is(error?.kind, 'stall');
  assert.match(error!.message, '300 ms');
  assert.is(fake.requests.length, 1);
});

test('a non-streamed reply that stalls after its headers ends with kind "stall"', async () => {
  fake.enqueue({ parts: [{ text: 'never sent' }, { stall: true }] });
  const err = await provider({ ...fast, stallTimeoutMs: 300 })
    .complete(ask('x'))
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  assert.instance(err, ProviderError);
  assert.is((err as ProviderError).kind, 'stall');
});

test('cancelling through the AbortSignal ends the stream with kind "cancelled"', async () => {
  fake.enqueue({ parts: [{ text: ['one ', 'two ', 'three ', 'four'] }], delayMs: 150 });
  const ac = new AbortController();
  const seen: string[] = [];
  let error: unknown;
  try {
    for await (const ev of provider().stream(ask('x', { signal: ac.signal }))) {
      if (ev.type === 'text') {
        seen.push(ev.text);
        ac.abort();
      }
    }
  } catch (err) {
    error = err;
  }
  // The first text, then the cancel: the chunks still on their way (150 ms apart) never arrive.
  assert.equal(seen, ['one ']);
  assert.instance(error, ProviderError);
  assert.is((error as ProviderError).kind, 'cancelled');
});

test('a caller that stops reading early closes the request', async () => {
  fake.enqueue({ parts: [{ text: ['a', 'b', 'c'] }, { stall: true }] });
  for await (const ev of provider().stream(ask('x'))) if (ev.type === 'text') break;
  // The server sees the connection go away, rather than a stalled reply held open forever.
  await waitFor(() => fake.requests[0]!.closed, 2000, 'the server to see the request closed');
});

test('a server that never answers: kind "stall" once the stall timeout passes without headers', async () => {
  const silent = createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const { port } = silent.address() as AddressInfo;
  try {
    const p = createProvider(
      { protocol: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: KEY },
      { stallTimeoutMs: 300 },
    );
    const { error } = await drain(p.stream(ask('x')));
    assert.is(error?.kind, 'stall');
    assert.match(error!.message, 'sent nothing for 300 ms');
  } finally {
    silent.closeAllConnections();
    silent.close();
  }
});

test('a wrong key: kind auth, not retried, and the key is not in the message', async () => {
  const wrong = 'sk-wrong-key-9876543210';
  const { error } = await drain(provider(fast, undefined, wrong).stream(ask('x')));
  assert.is(error?.kind, 'auth');
  assert.is(error?.status, 401);
  assert.match(error!.message, /refused the API key/);
  // The fake echoes the key it got, as some servers do; it must not reach the message.
  assert.match(fake.requests[0]!.raw + JSON.stringify(fake.requests[0]!.headers), wrong);
  assert.not.match(error!.message, wrong);
  assert.is(fake.requests.length, 1);
});

test('the key is redacted from a provider error message that quotes it', async () => {
  fake.enqueue({
    parts: [{ text: 'x' }, { error: { message: `upstream rejected ${KEY} for this org` } }],
  });
  const { error } = await drain(provider().stream(ask('x')));
  assert.ok(error);
  assert.not.match(error!.message, KEY);
  assert.match(error!.message, '[redacted]');
});

test('an unknown model: kind model_not_found naming the model; a 404 page: a base-URL hint', async () => {
  fake.enqueue(httpError(404));
  const { error } = await drain(provider().stream(ask('x', { model: 'gpt-nope' })));
  assert.is(error?.kind, 'model_not_found');
  assert.match(error!.message, '"gpt-nope"');
  fake.enqueue(httpError(404, { body: '404 page not found' }));
  const second = await drain(provider().stream(ask('x')));
  assert.is(second.error?.kind, 'bad_request');
  assert.match(second.error!.message, /Check the base URL/);
  assert.is(fake.requests.length, 2, '404 is never retried');
});

test('a 400 that says the model does not exist is model_not_found (DeepSeek style)', async () => {
  fake.enqueue(httpError(400, { message: 'Model Not Exist', type: 'invalid_request_error' }));
  const { error } = await drain(provider().stream(ask('x', { model: 'deepseek-nope' })));
  assert.is(error?.kind, 'model_not_found');
});

test('a 200 that is not an event stream is a protocol error', async () => {
  fake.enqueue(httpError(200, { body: '<html>captive portal</html>' }));
  const { error } = await drain(provider().stream(ask('x')));
  assert.is(error?.kind, 'protocol');
  assert.match(error!.message, /base URL/);
});

test.run();
