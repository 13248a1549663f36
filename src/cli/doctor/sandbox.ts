import { sandboxStatus } from '../../shared/sandbox/status.js';
import { type Check, ok, warn } from './check.js';

/**
 * The server's own probe (what /api/health answers): the same program (SVC_SANDBOX_BWRAP), the
 * flags every command runs with and the same fix, so a pass means commands will start.
 */
export async function checkSandbox(): Promise<Check> {
  const s = await sandboxStatus(true);
  return s.state === 'on'
    ? ok('sandbox', `${s.engine} works: terminal commands run sandboxed`)
    : warn(
        'sandbox',
        `${s.reason}, so terminal commands run without an OS sandbox`,
        s.fix ?? undefined,
      );
}
