import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { escapeSlack, markdownToMrkdwn } from '../../src/workers/channels/slack-format.js';

/** What Slack shows for what the model writes: Markdown turned into mrkdwn, markup characters escaped. */

test('emphasis, strike, links and headings become mrkdwn', () => {
  assert.is(
    markdownToMrkdwn('a **bold** and *italic* and __also bold__ and ~~gone~~'),
    'a *bold* and _italic_ and *also bold* and ~gone~',
  );
  assert.is(
    markdownToMrkdwn('see [the docs](https://example.com/a?b=1&c=2)'),
    'see <https://example.com/a?b=1&amp;c=2|the docs>',
  );
  assert.is(markdownToMrkdwn('## Results\n- one\n- two'), '*Results*\n• one\n• two');
});

test('&, < and > are escaped everywhere, code is kept as written', () => {
  assert.is(escapeSlack('<!channel> & <@U1>'), '&lt;!channel&gt; &amp; &lt;@U1&gt;');
  assert.is(markdownToMrkdwn('run `a **b** <c>` now'), 'run `a **b** &lt;c&gt;` now');
  assert.is(
    markdownToMrkdwn('```ts\nif (a < b && c) {}\n```'),
    '```\nif (a &lt; b &amp;&amp; c) {}\n```',
  );
});

test.run();
