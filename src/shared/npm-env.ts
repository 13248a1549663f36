import { delimiter } from 'node:path';

/**
 * npm's own environment, for a svc started through `npx svc` or `npm run`: its npm_* variables
 * (two dozen, among them npm's config) and the PATH entries it prepends (npx's temporary
 * ~/.npm/_npx/<hash>/node_modules/.bin, its node-gyp-bin). None of it is svc's to pass on: a
 * systemd unit must not name a temporary npx folder, the agent's commands must not run npm's shims.
 */
const NPM_PATH_ENTRY = /[\\/]_npx[\\/]|[\\/]node-gyp-bin[\\/]?$/;

export function cleanPath(path: string): string {
  return path
    .split(delimiter)
    .filter((p) => p !== '' && !NPM_PATH_ENTRY.test(p))
    .join(delimiter);
}

/** A copy of `env` without npm's variables and PATH entries. */
export function withoutNpm(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!/^npm_/i.test(k)) out[k] = v;
  if (out.PATH !== undefined) out.PATH = cleanPath(out.PATH);
  return out;
}

/** Takes npm's variables and PATH entries out of this process's own environment. */
export function stripNpm(env: NodeJS.ProcessEnv = process.env): void {
  const clean = withoutNpm(env);
  for (const k of Object.keys(env)) if (!(k in clean)) delete env[k];
  if (clean.PATH !== undefined) env.PATH = clean.PATH;
}
