import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import { createNetns, netnsUnavailable, type Netns } from '../helpers/netns.js';
import { connectWs, messagesOf, startRig, type TurnRig, type WsClient } from '../helpers/turns.js';
import { skipTest } from '../helpers/skip.js';

/**
 * The two built-in workflows run end to end through the real agent worker against the fake
 * provider: repo-digest over a real git repository (its shell steps through the permission
 * engine), page-brief over a real page fetched by web_fetch. Each ends completed with every
 * step's output.
 *
 * web_fetch refuses loopback and private addresses, so the page is served from a public-looking
 * address put on the host end of a throwaway veth pair (needs root; skipped with a printed reason
 * otherwise). The address is local to this machine and goes when the pair is removed.
 */

let rig: TurnRig;
let ws: WsClient;
let repo: string;

test.before(async () => {
  // The lite slot is the Anthropic entry, so repo-digest's `model: lite` shows in the protocol asked.
  rig = await startRig({
    models: { oa: { protocol: 'openai' }, an: { protocol: 'anthropic' } },
    lite: 'an',
  });
  ws = await connectWs(rig.port, ['workflows']);
  // Not under /tmp: a sandboxed command sees a private /tmp of its own session.
  repo = mkdtempSync(join('/var/tmp', 'svc-wf-repo-'));
  const git = (...args: string[]) =>
    execFileSync(
      'git',
      ['-C', repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', ...args],
      { stdio: 'pipe' },
    );
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'a.txt'), 'one\n');
  git('add', 'a.txt');
  git('commit', '-q', '-m', 'Add the first file');
  writeFileSync(join(repo, 'b.txt'), 'two\n');
  git('add', 'b.txt');
  git('commit', '-q', '-m', 'Add the second file');
  writeFileSync(join(repo, 'a.txt'), 'one, changed\n'); // an uncommitted change for the status step
});
test.after(async () => {
  ws?.close();
  await rig?.stop();
  if (repo) rmSync(repo, { recursive: true, force: true });
});
test.before.each(() => rig.fake.reset());

const ended = (runId: string) =>
  ws.waitEvent(
    (e) =>
      e.data?.run_id === runId &&
      (e.type === 'workflow.run_completed' || e.type === 'workflow.run_failed'),
    `the end of ${runId}`,
    60_000,
  );
const stepsOf = (runId: string) =>
  ws.events
    .filter((e) => e.topic === 'workflows' && e.data?.run_id === runId)
    .map((e) => `${e.type}${e.data.step ? `:${e.data.step}` : ''}`);

test('repo-digest: git log and status of a real repository, then a digest on the lite slot', async () => {
  rig.fake.enqueue({ parts: [{ text: 'DIGEST: two files added; a.txt changed, not committed.' }] });
  const start = await api(rig.port, 'POST', '/api/workflows/repo-digest/run', {
    inputs: { path: repo, commits: 5 },
  });
  assert.is(start.status, 202, JSON.stringify(start.body));
  const { run_id, session_id } = start.body;
  const end = await ended(run_id);
  assert.is(end.type, 'workflow.run_completed', JSON.stringify(end.data));
  assert.equal(stepsOf(run_id), [
    'workflow.run_started',
    'workflow.step_started:log',
    'workflow.step_completed:log',
    'workflow.step_started:status',
    'workflow.step_completed:status',
    'workflow.step_started:digest',
    'workflow.step_completed:digest',
    'workflow.run_completed',
  ]);

  const out = end.data.outputs;
  assert.match(
    out.log,
    /^[0-9a-f]{7,} Add the second file\n[0-9a-f]{7,} Add the first file$/,
    out.log,
  );
  assert.match(out.status, /^## main/, out.status);
  assert.match(out.status, /^ M a\.txt$/m, 'the uncommitted change');
  assert.is(out.digest, 'DIGEST: two files added; a.txt changed, not committed.');

  // One model call, on the lite slot, holding both shell outputs.
  assert.equal(
    rig.fake.requests.map((r) => r.protocol),
    ['anthropic'],
  );
  const asked = JSON.stringify(rig.fake.requests[0]!.body);
  assert.ok(
    asked.includes('Add the second file') && asked.includes('M a.txt') && asked.includes(repo),
    'the digest prompt carries both outputs and the path',
  );

  const run = (await api(rig.port, 'GET', `/api/workflows/runs/${run_id}`)).body;
  assert.is(run.status, 'completed');
  assert.ok(
    ['log', 'status', 'digest'].every((id) => run.steps[id]?.status === 'completed'),
    JSON.stringify(run.steps),
  );
  const msgs = await messagesOf(rig.port, session_id);
  assert.is(
    msgs.filter((m) => m.role === 'tool').length,
    2,
    'both shell steps are tool calls in the session',
  );
  assert.ok(msgs.some((m) => m.role === 'assistant' && m.content.text === out.digest));
});

const reason = netnsUnavailable();

const pageBrief =
  'page-brief: web_fetch reads a real page, then the brief answers the question from it';
if (reason) {
  skipTest(pageBrief, reason);
} else {
  test(pageBrief, async () => {
    const ns: Netns = createNetns();
    let page: Server | undefined;
    try {
      // A public-looking address (web_fetch refuses private ones) on this machine only.
      const addr = `45.${randomInt(64, 250)}.${randomInt(1, 250)}.${randomInt(2, 250)}`;
      execFileSync('ip', ['addr', 'add', `${addr}/32`, 'dev', ns.hostIf], { stdio: 'pipe' });
      const server = createServer((req, res) => {
        if (req.url !== '/notes') return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          '<html><head><title>Release notes</title></head><body><h1>Release 4.2</h1><p>The export button moved to the Share menu.</p></body></html>',
        );
      });
      page = server;
      await new Promise<void>((resolve) => server.listen(0, addr, resolve));
      const url = `http://${addr}:${(server.address() as AddressInfo).port}/notes`;

      rig.fake.enqueue({ parts: [{ text: 'BRIEF: the export button is in the Share menu now.' }] });
      const start = await api(rig.port, 'POST', '/api/workflows/page-brief/run', {
        inputs: { url, question: 'Where is the export button?' },
      });
      assert.is(start.status, 202, JSON.stringify(start.body));
      const { run_id, session_id } = start.body;
      const end = await ended(run_id);
      assert.is(end.type, 'workflow.run_completed', JSON.stringify(end.data));
      assert.equal(stepsOf(run_id), [
        'workflow.run_started',
        'workflow.step_started:fetch',
        'workflow.step_completed:fetch',
        'workflow.step_started:brief',
        'workflow.step_completed:brief',
        'workflow.run_completed',
      ]);
      const out = end.data.outputs;
      assert.match(out.fetch, /Release 4\.2/);
      assert.match(out.fetch, /The export button moved to the Share menu\./);
      assert.is(out.brief, 'BRIEF: the export button is in the Share menu now.');

      // The brief ran on the default slot with the question and the fetched page in its prompt.
      assert.equal(
        rig.fake.requests.map((r) => r.protocol),
        ['openai'],
      );
      const asked = JSON.stringify(rig.fake.requests[0]!.body);
      assert.ok(
        asked.includes('Where is the export button?') &&
          asked.includes('moved to the Share menu') &&
          asked.includes(url),
      );

      const run = (await api(rig.port, 'GET', `/api/workflows/runs/${run_id}`)).body;
      assert.is(run.status, 'completed');
      const msgs = await messagesOf(rig.port, session_id);
      const call = msgs.find(
        (m) => m.role === 'assistant' && m.content.tool_calls?.[0]?.name === 'web_fetch',
      );
      assert.ok(call, 'the fetch step is a web_fetch call in the session');
      assert.equal(JSON.parse(call.content.tool_calls[0].arguments), { url });
    } finally {
      page?.closeAllConnections();
      page?.close();
      ns.close();
    }
  });
}

test.run();
