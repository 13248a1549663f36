import { defaultManager } from '../service-files.js';
import { inspectService, lingerAdvice } from '../service.js';
import { type Check, type Context, ok, warn } from './check.js';

/** The user service (systemd or launchd) that keeps svc running, if one is installed. */
export async function checkService(ctx: Context): Promise<Check[]> {
  const manager = defaultManager();
  if (!manager)
    return [
      ok(
        'service',
        `no service manager support on ${process.platform}; run "svc serve -d" instead`,
      ),
    ];
  const s = await inspectService(ctx.paths, manager);
  if (!s.installed)
    return [
      ok(
        'service',
        `no ${manager} service is installed ("svc service install" keeps svc running across logouts and reboots)`,
      ),
    ];
  const checks: Check[] = [];
  if (s.matches_this_install === false)
    checks.push(
      warn(
        'service',
        `${s.file} runs ${s.runs?.node ?? '?'} ${s.runs?.bin ?? '?'} with SVC_HOME=${s.runs?.home ?? '?'}, not this svc`,
        'svc service install (rewrites it for this Node, install and SVC_HOME)',
      ),
    );
  if (s.active === null)
    checks.push(
      warn(
        'service',
        `${s.file} is installed, but its state is unknown: ${s.manager_note ?? 'the service manager did not answer'}`,
        manager === 'systemd' ? 'systemctl --user status svc' : undefined,
      ),
    );
  else if (s.active !== 'active' && s.active !== 'running')
    checks.push(
      warn(
        'service',
        `the ${manager} service is ${s.active}${s.enabled ? ` (${s.enabled})` : ''}`,
        manager === 'systemd'
          ? 'systemctl --user start svc; journalctl --user -u svc shows why it stopped'
          : 'svc service install',
      ),
    );
  else if (s.matches_this_install !== false)
    checks.push(
      ok('service', `the ${manager} service is ${s.active}${s.enabled ? ` and ${s.enabled}` : ''}`),
    );
  if (s.linger === 'no') checks.push(warn('linger', lingerAdvice()));
  return checks;
}
