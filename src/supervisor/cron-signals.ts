import { log } from '../shared/log.js';
import type { Child } from './child-process.js';
import type { Services } from './services.js';

/**
 * What any child tells the supervisor about scheduled tasks: a task changed (start or stop the
 * cron worker, then have it reload the task), a run ended (stop the worker if nothing wants it),
 * and the approvals its runs' turns ask (and budget warnings for its notify targets), passed on
 * to it. The end of a turn reaches it from the turn dispatcher.
 */
export function handleCronSignals(child: Child, services: Services): void {
  child.endpoint.handle('cron.changed', async (p) => {
    services.sync();
    const cron = services.get('cron');
    // Not awaited: a worker still starting reads the task at its start, and handles this after that in order.
    if (cron)
      void cron.endpoint
        .request('cron.reload', p)
        .catch((err: Error) =>
          log.warn('the cron worker did not reload a task', { task: p.id, error: err.message }),
        );
    return {};
  });
  child.endpoint.handle('cron.idle', () => {
    services.sync();
    return {};
  });
  child.endpoint.onEvent((event) => {
    const passOn =
      event.type === 'cron.approval' ||
      // Budget warnings come from the agent workers that check the budgets; no one else says them.
      (event.type === 'usage.warning' && child.role === 'agent');
    if (!passOn) return;
    const cron = services.get('cron');
    if (cron && cron !== child) cron.endpoint.emit(event.type, event.payload as never);
  });
}
