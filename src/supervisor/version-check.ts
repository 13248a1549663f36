import type { Config } from '../shared/config/schema.js';
import { log } from '../shared/log.js';
import type { VersionInfo } from '../shared/protocol/ipc.js';
import { version } from '../shared/version.js';
import { fetchRelease, notesHead, releasesUrl } from '../shared/upgrade/releases.js';
import { isDevBuild, isNewer, tagVersion } from '../shared/upgrade/semver.js';

const FIRST_CHECK_MS = 2000;
const EVERY_MS = 12 * 3600 * 1000;
const FIRST_RETRY_MS = 60_000;

/**
 * The automatic version check behind the Web UI's badge: shortly after svc is ready, then every
 * 12 hours. One check at a time; a failure is logged and retried after 1, 2, 4, … minutes (at
 * most 12 hours), and never affects anything else. It only looks: installing is never automatic.
 */
export class VersionCheck {
  private timer: NodeJS.Timeout | undefined;
  private inflight: Promise<void> | undefined;
  private failures = 0;
  private latest: string | null = null;
  private checkedAt: string | null = null;
  private releaseUrl: string | null = null;
  private notes: string[] = [];
  private error: string | null = null;

  constructor(
    private readonly config: () => Config,
    private readonly upgrading: () => boolean,
    private readonly changed: (info: VersionInfo) => void,
  ) {}

  enabled(): boolean {
    return this.config().upgrade.check && process.env.SVC_UPGRADE_CHECK !== '0';
  }

  /** Starts (or, after a config change, restarts or stops) the schedule. */
  sync(): void {
    if (!this.enabled()) return this.stop();
    if (!this.timer && !this.inflight)
      this.schedule(this.checkedAt === null ? FIRST_CHECK_MS : EVERY_MS);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    this.stop();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.check();
    }, ms);
    this.timer.unref();
  }

  check(): Promise<void> {
    this.inflight ??= this.run().finally(() => {
      this.inflight = undefined;
      if (this.enabled())
        this.schedule(
          this.failures === 0
            ? EVERY_MS
            : Math.min(EVERY_MS, FIRST_RETRY_MS * 2 ** (this.failures - 1)),
        );
    });
    return this.inflight;
  }

  private async run(): Promise<void> {
    try {
      const release = await fetchRelease(releasesUrl(this.config()));
      this.latest = tagVersion(release.tag_name);
      this.releaseUrl = release.html_url ?? null;
      this.notes = notesHead(release.body);
      this.error = null;
      this.failures = 0;
      if (this.info().update_available)
        log.info('a newer svc is available; "svc upgrade" or the Web UI installs it', {
          version,
          latest: this.latest,
        });
    } catch (err) {
      this.failures++;
      this.error = (err as Error).message;
      log.warn('the version check failed; it will try again later', {
        error: this.error,
        failures: this.failures,
      });
    }
    this.checkedAt = new Date().toISOString();
    this.changed(this.info());
  }

  info(): VersionInfo {
    const dev = isDevBuild(version);
    return {
      name: 'svc',
      version,
      dev_build: dev,
      latest: this.latest,
      update_available: !dev && this.latest !== null && isNewer(this.latest, version),
      checked_at: this.checkedAt,
      release_url: this.releaseUrl,
      notes: this.notes,
      check_enabled: this.enabled(),
      check_error: this.error,
      upgrading: this.upgrading(),
    };
  }
}
