import { runTool } from '../service.js';
import { type Check, ok, warn } from './check.js';

export async function checkSandbox(): Promise<Check> {
  if (process.platform === 'darwin') {
    const r = await runTool('sandbox-exec', ['-p', '(version 1)(allow default)', '/usr/bin/true']);
    return r.ok
      ? ok('sandbox', 'sandbox-exec works: terminal commands run sandboxed')
      : warn(
          'sandbox',
          `sandbox-exec cannot start (${r.why}); terminal commands run without an OS sandbox`,
        );
  }
  if (process.platform !== 'linux')
    return warn(
      'sandbox',
      `no OS sandbox on ${process.platform}; terminal commands run without one`,
    );
  const r = await runTool('bwrap', [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--unshare-pid',
    'true',
  ]);
  if (r.ok) return ok('sandbox', 'bubblewrap (bwrap) works: terminal commands can run sandboxed');
  if (r.missing)
    return warn(
      'sandbox',
      'bubblewrap (bwrap) is not installed, so terminal commands run without an OS sandbox',
      'install it (Debian/Ubuntu: sudo apt install bubblewrap)',
    );
  return warn(
    'sandbox',
    `bwrap is installed but cannot start a sandbox here (${r.why}); terminal commands run without one`,
    'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the AppArmor userns rule), or run svc where they are allowed',
  );
}
