import { z } from 'zod';
import { ConfigError } from '../../shared/config/load.js';
import { chooseEngine, loadUws } from '../../shared/engine-choice.js';
import { describeEngine } from '../../shared/runtime.js';
import { releasesUrl } from '../../shared/upgrade/releases.js';
import { isDevBuild } from '../../shared/upgrade/semver.js';
import { version } from '../../shared/version.js';
import { type Check, type Context, fail, ok, warn } from './check.js';

/** The install itself: the Node it runs on, the HTTP engine, and where its updates come from. */

export function checkNode(ctx: Context): Check {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 20)
    return fail(
      'node',
      `Node ${process.versions.node} is too old; svc needs Node 20 or newer`,
      'install Node 20 or newer and reinstall svc with it',
    );
  let engine: string;
  try {
    engine = ctx.running
      ? `${runningEngine(ctx.running)} (the running server's)`
      : wouldUseEngine();
  } catch (err) {
    return fail(
      'node',
      `Node ${process.versions.node}; no HTTP engine can serve: ${(err as Error).message}`,
      'unset SVC_HTTP_ENGINE (or set it to node)',
    );
  }
  return ok('node', `Node ${process.versions.node}; HTTP engine: ${engine}`);
}

/** The engine the running server reports (`engine`; older servers said only `uws`). */
function runningEngine(status: Record<string, unknown>): string {
  const engine = z.object({ engine: z.enum(['uws', 'node']) }).safeParse(status);
  if (engine.success) return describeEngine(engine.data.engine);
  const uws = z.object({ uws: z.literal('native') }).safeParse(status);
  return uws.success ? describeEngine('uws') : 'not reported';
}

/** The gateway's own rule, run here: what `svc serve` would pick on this Node. */
function wouldUseEngine(): string {
  const name = chooseEngine(); // throws when SVC_HTTP_ENGINE forces one that cannot run
  if (process.env.SVC_HTTP_ENGINE?.trim())
    return `${describeEngine(name)} would serve (forced by SVC_HTTP_ENGINE)`;
  const uws = loadUws();
  return `${describeEngine(name)} would serve (${'error' in uws ? uws.error : 'its binary loads on this Node'})`;
}

/** Where newer releases would come from; the network is left to `svc upgrade --check` (doctor stays fast offline). */
export function checkRelease(ctx: Context): Check {
  if (isDevBuild(version))
    return ok('release', `svc ${version} is a development build; it is never offered an update`);
  if (ctx.config instanceof ConfigError)
    return warn(
      'release',
      `svc ${version}; where releases come from is unknown while config.yml is broken`,
      'fix config.yml (see the config check above)',
    );
  let url: string;
  try {
    url = releasesUrl(ctx.config);
  } catch (err) {
    return warn(
      'release',
      `svc ${version}; ${(err as Error).message}`,
      'set upgrade.releases_url (or SVC_RELEASES_URL) to an https:// releases API',
    );
  }
  if (!ctx.config.upgrade.check || process.env.SVC_UPGRADE_CHECK === '0')
    return ok(
      'release',
      `svc ${version}; the automatic check for newer releases is off (svc upgrade --check looks now)`,
    );
  return ok(
    'release',
    `svc ${version}; svc serve looks for newer releases at ${url} every 12 hours (svc upgrade --check looks now)`,
  );
}
