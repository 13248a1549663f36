import { startChild } from '../../shared/child.js';
import { log } from '../../shared/log.js';
import { resolvePaths } from '../../shared/paths.js';
import { runStep, pageGist } from './actions.js';
import { BrowserLink } from './connection.js';
import { Recorder } from './recorder.js';

/**
 * The browser worker: the one CDP connection (through playwright-core's connectOverCDP) shared
 * by every agent worker, and the headless Chromium svc starts under `launch: auto`. Its own
 * process so that playwright's memory is paid only when a browser is used, and so that the
 * launched Chromium has one owner whose end (however it ends) ends the browser too: its
 * process group is declared to the supervisor, which kills it if this worker dies.
 */
let acting = 0;
const endpoint = startChild('browser', () => acting);
const link = new BrowserLink(resolvePaths().home, (pgid) =>
  endpoint.emit('child.groups', { pgids: pgid === null ? [] : [pgid] }),
);
const calls = new Map<string, AbortController>();
const recorder = new Recorder();

endpoint.handle('child.start', async ({ config }) => {
  await link.apply(config.browser);
  return {};
});
endpoint.onEvent((event) => {
  if (event.type === 'config.changed')
    void link
      .apply(event.payload.config.browser)
      .catch((err: Error) =>
        log.warn('applying the browser config failed', { error: err.message }),
      );
});
endpoint.handle('browser.status', () => link.status());
endpoint.handle('browser.verify', ({ cdp_url, port, timeout_ms }) =>
  link.verify({ cdp_url, port }, timeout_ms),
);
endpoint.handle('browser.record', ({ session_id, op }) => {
  if (op === 'start') {
    recorder.start(session_id);
    return { steps: [], was_recording: false };
  }
  return recorder.stop(session_id);
});
endpoint.handle('browser.act', async ({ call_id, step, max_chars, session_id }) => {
  const ac = new AbortController();
  calls.set(call_id, ac);
  acting++;
  try {
    const kept = recorder.recording(session_id)
      ? await recorder.prepare(await link.page(), session_id, step)
      : null;
    const r = await runStep(link, step, ac.signal, max_chars);
    recorder.keep(session_id, kept);
    return r;
  } catch (err) {
    const page = link.pageIfConnected();
    const why = ac.signal.aborted
      ? 'interrupted'
      : ((err as Error).message.split('\n')[0] ?? 'failed');
    const gist = page && !ac.signal.aborted ? await pageGist(page) : '';
    return {
      ok: false,
      output: `${step.action}${step.target ? ` ${step.target}` : ''} failed: ${why}${gist ? `\nThe page shows:\n${gist}` : ''}`,
      url: page?.url() ?? '',
      title: page ? await page.title().catch(() => '') : '',
    };
  } finally {
    acting--;
    calls.delete(call_id);
  }
});
endpoint.handle('browser.cancel', ({ call_id }) => {
  const ac = calls.get(call_id);
  ac?.abort();
  return { cancelled: ac !== undefined };
});

// svc's own browser ends with this worker: on SIGTERM after closing, on any exit at least the group.
process.on('SIGTERM', () => {
  void link
    .close()
    .catch((err: Error) => log.warn('closing the browser failed', { error: err.message }))
    .finally(() => process.exit(0));
});
process.on('exit', () => link.killNow());
process.on('SIGINT', () => {});
