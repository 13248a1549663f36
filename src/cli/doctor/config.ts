import { existsSync, readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../../shared/config/load.js';
import type { Config } from '../../shared/config/schema.js';
import { parseServeEnv } from '../../shared/config/serve-env.js';
import type { Paths } from '../../shared/paths.js';
import { type Check, type Context, fail, ok, warn } from './check.js';

/** config.yml and serve.env as svc serve would read them. */
export function checkConfig(ctx: Context): Check[] {
  const { paths, config } = ctx;
  const checks: Check[] = [];
  if (config instanceof ConfigError)
    checks.push(
      fail(
        'config',
        config.message.split('\n').join('; '),
        `edit ${paths.config}; a running svc keeps its last good configuration until then`,
      ),
    );
  else if (!existsSync(paths.config))
    checks.push(ok('config', 'no config.yml yet: the defaults apply'));
  else
    checks.push(
      ok(
        'config',
        `config.yml is valid (${Object.keys(config.models).length} model${Object.keys(config.models).length === 1 ? '' : 's'})`,
      ),
    );
  let envText: string | undefined;
  try {
    envText = readFileSync(paths.serveEnv, 'utf8');
  } catch {
    // no serve.env
  }
  const bad = envText === undefined ? [] : parseServeEnv(envText).bad;
  if (bad.length > 0)
    checks.push(
      warn(
        'serve-env',
        `serve.env lines ${bad.join(', ')} are not KEY=VALUE and are skipped`,
        `edit ${paths.serveEnv}`,
      ),
    );
  return checks;
}

/** Loads config.yml as the supervisor would, keeping the error to report it. */
export function readConfig(paths: Paths): Config | ConfigError {
  try {
    return loadConfig(paths.config);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    return new ConfigError((err as Error).message);
  }
}
