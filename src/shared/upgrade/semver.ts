/** Release versions: `major.minor.patch`, an optional leading `v`; anything after it is a suffix. */

export interface Parsed {
  parts: [number, number, number];
  /** `-dev.3`, `+local`: a development build, never offered an update. */
  suffix: string;
}

export function parseVersion(raw: string): Parsed | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(.*)$/.exec(raw.trim());
  if (!m) return undefined;
  return { parts: [Number(m[1]), Number(m[2]), Number(m[3])], suffix: m[4] ?? '' };
}

/** A tag (`v1.2.3`) as the version it names. */
export function tagVersion(tag: string): string {
  return tag.trim().replace(/^v/, '');
}

export function isDevBuild(version: string): boolean {
  const p = parseVersion(version);
  return p === undefined || p.suffix !== '';
}

/** Numeric on major.minor.patch; suffixes are ignored for the comparison. */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) return 0;
  for (let i = 0; i < 3; i++) {
    const d = pa.parts[i]! - pb.parts[i]!;
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

export function isNewer(latest: string, current: string): boolean {
  return compareVersions(latest, current) > 0;
}
