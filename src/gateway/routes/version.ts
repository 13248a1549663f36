import { z } from 'zod';
import type { Deps } from '../deps.js';
import type { VersionInfo } from '../../shared/protocol/ipc.js';
import { isDevBuild } from '../../shared/upgrade/semver.js';
import { version } from '../../shared/version.js';
import { ApiError } from '../../shared/errors.js';
import { upgradeStarted, versionView } from '../../shared/protocol/answers/version.js';
import { route, type Route } from '../route.js';

const NO_CACHE = { 'Cache-Control': 'no-store', Pragma: 'no-cache', Expires: '0' };

/** The running version with what the automatic check found, and the Web UI's upgrade button. */
export function versionRoutes(deps: Pick<Deps, 'endpoint'>): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/version',
      summary:
        "The running version, the latest release the automatic check found (latest, update_available, checked_at, release_url, notes: the notes' first lines); public, carries no secrets.",
      public: true,
      response: versionView,
      handler: async ({ local }) => {
        const info = await deps.endpoint.request('version.info', {}).catch(
          (): VersionInfo => ({
            name: 'svc',
            version,
            dev_build: isDevBuild(version),
            latest: null,
            update_available: false,
            checked_at: null,
            release_url: null,
            notes: [],
            check_enabled: false,
            check_error: 'the supervisor did not answer',
            upgrading: false,
          }),
        );
        return { body: { ...info, local }, headers: NO_CACHE };
      },
    }),
    route({
      method: 'POST',
      path: '/api/version/upgrade',
      summary:
        'Installs the latest release (what `svc upgrade --yes` does): 202 at once, progress on /ws topic server (type upgrade: downloading, verifying, installing, restarting, done or failed); 409 while one runs or on a development build.',
      body: z.object({}).strict().optional(),
      status: 202,
      response: upgradeStarted,
      errors: [409],
      handler: async () => {
        const r = await deps.endpoint.request('version.upgrade', {});
        if (r.accepted) return { status: 202, body: { status: 'upgrading' as const } };
        const message =
          r.reason === 'dev_build'
            ? `svc ${version} is a development build, which is never upgraded; install a release instead.`
            : 'An upgrade is already running; its progress is on /ws (topic server).';
        throw new ApiError('conflict', message);
      },
    }),
  ];
}
