import { log } from '../../shared/log.js';
import type { Endpoint } from '../../shared/protocol/endpoint.js';
import type { EventPayload } from '../../shared/protocol/ipc.js';
import {
  addNotifyResult,
  type CronRun,
  type CronTask,
  getCronTask,
  listCronTasks,
  type NotifyResult,
  type NotifyTarget,
} from '../../shared/store/cron.js';
import type { Db } from '../../shared/store/db.js';
import { warningText } from '../../shared/usage/budgets.js';

const MAX_TEXT = 3500;

/**
 * Sends a run's result (and the approvals it waits for) to the task's notify targets through the
 * channels worker. A target that cannot be reached is recorded on the run; it never fails it.
 */
export class Notifier {
  constructor(private readonly deps: { db: Db; endpoint: Endpoint }) {}

  async result(task: CronTask, run: CronRun): Promise<void> {
    if (task.notify.length === 0) return;
    const text =
      run.status === 'completed'
        ? `⏰ ${task.name}\n\n${run.reply ?? '(no reply)'}`
        : `⏰ ${task.name} ${run.status === 'interrupted' ? 'was interrupted' : 'failed'}: ${run.error ?? 'no reason was given'}`;
    await this.send(task, run.id, clip(text), 'result');
  }

  async approvalAsked(
    task: CronTask,
    runId: string,
    sessionId: string,
    e: EventPayload<'cron.approval'>,
  ): Promise<void> {
    if (task.notify.length === 0) return;
    const text = `⏰ ${task.name} asks to use ${e.tool}: ${e.reason}\nAnswer in the Web UI (session ${sessionId}); with no answer it is denied.`;
    await this.send(task, runId, clip(text), 'approval');
  }

  /**
   * A budget reached its warning share (once per limit and period, decided by the agent): the
   * notify targets of the enabled schedules hear it, each chat once; a scheduled task's own limit
   * goes to that task's targets only. Not tied to a run, so a target that fails is only logged.
   */
  async budgetWarning(state: EventPayload<'usage.warning'>): Promise<void> {
    let targets: NotifyTarget[];
    let subject: string | undefined;
    if (state.scope === 'cron_task') {
      const task = getCronTask(this.deps.db, state.key.slice('cron_task:'.length));
      targets = task?.notify ?? [];
      subject = task ? `the task "${task.name}"` : undefined;
    } else {
      const seen = new Map<string, NotifyTarget>();
      for (const t of listCronTasks(this.deps.db))
        if (t.enabled) for (const n of t.notify) seen.set(`${n.platform}\n${n.chat_id}`, n);
      targets = [...seen.values()];
    }
    const text = clip(`⚠️ svc budget warning. ${warningText(state, subject)}`);
    await Promise.all(
      targets.map((t) =>
        this.deps.endpoint
          .request('channels.deliver', { platform: t.platform, chat_id: t.chat_id, text })
          .catch((err: Error) =>
            log.warn('a budget warning could not reach a notify target', {
              platform: t.platform,
              error: err.message,
            }),
          ),
      ),
    );
  }

  private async send(
    task: CronTask,
    runId: string,
    text: string,
    kind: NotifyResult['kind'],
  ): Promise<void> {
    await Promise.all(
      task.notify.map(async (t) => {
        const at = new Date().toISOString();
        try {
          const r = await this.deps.endpoint.request('channels.deliver', {
            platform: t.platform,
            chat_id: t.chat_id,
            text,
          });
          addNotifyResult(this.deps.db, runId, {
            platform: t.platform,
            chat_id: t.chat_id,
            ok: true,
            message_id: r.message_id,
            kind,
            at,
          });
        } catch (err) {
          const error = (err as Error).message;
          log.warn('a cron notify target could not be reached', {
            task: task.id,
            platform: t.platform,
            error,
          });
          addNotifyResult(this.deps.db, runId, {
            platform: t.platform,
            chat_id: t.chat_id,
            ok: false,
            error,
            kind,
            at,
          });
        }
      }),
    );
  }
}

function clip(text: string): string {
  return text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT - 1)}…`;
}
