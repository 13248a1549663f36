import { z } from 'zod';
import type { Config } from '../config/schema.js';
import { assertHttps, fetchText, UpgradeError } from './fetch.js';

/** A GitHub-compatible release: the fields svc reads from `<releases_url>/latest` or `/tags/<tag>`. */
export const releaseSchema = z
  .object({
    tag_name: z.string().min(1).max(100),
    body: z.string().max(1_000_000).nullable().optional(),
    html_url: z.string().max(2000).nullable().optional(),
    assets: z
      .array(
        z
          .object({
            name: z.string().min(1).max(300),
            browser_download_url: z.string().min(1).max(2000),
            size: z.number().int().nonnegative(),
          })
          .loose(),
      )
      .max(1000)
      .default([]),
  })
  .loose();
export type Release = z.infer<typeof releaseSchema>;

const API_CAP = 2 * 1024 * 1024;
const API_TIMEOUT_MS = 15_000;

/** SVC_RELEASES_URL wins over upgrade.releases_url; either must be https://. */
export function releasesUrl(
  config: Pick<Config, 'upgrade'>,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const url =
    env.SVC_RELEASES_URL && env.SVC_RELEASES_URL !== ''
      ? env.SVC_RELEASES_URL
      : config.upgrade.releases_url;
  assertHttps(url, env.SVC_RELEASES_URL ? 'SVC_RELEASES_URL' : 'upgrade.releases_url');
  return url.replace(/\/+$/, '');
}

/** The latest release, or the one tagged v<version> (or <version>). */
export async function fetchRelease(base: string, wanted?: string): Promise<Release> {
  const url =
    wanted === undefined
      ? `${base}/latest`
      : `${base}/tags/${encodeURIComponent(wanted.startsWith('v') ? wanted : `v${wanted}`)}`;
  const text = await fetchText(url, 'the releases API', {
    cap: API_CAP,
    timeoutMs: API_TIMEOUT_MS,
    accept: 'application/vnd.github+json',
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UpgradeError(`the releases API at ${url} did not answer JSON`);
  }
  const parsed = releaseSchema.safeParse(json);
  if (!parsed.success)
    throw new UpgradeError(
      `the releases API at ${url} answered something that is not a release (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''})`,
    );
  return parsed.data;
}

/** The notes' first lines, for the badge's popover and `svc upgrade`. */
export function notesHead(body: string | null | undefined, lines = 12): string[] {
  return (body ?? '')
    .split(/\r?\n/)
    .map((l) => l.trimEnd())
    .filter((l, i, all) => l !== '' || (i > 0 && all[i - 1] !== ''))
    .slice(0, lines);
}
