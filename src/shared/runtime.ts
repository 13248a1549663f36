/** The Node.js majors the test suite runs on (docs/running.md, engines.node and CI agree). */
export const TESTED_NODE_MAJORS = [20, 22, 24] as const;

/** One line for `svc serve` to print on a Node major nobody tested; undefined on a tested one. */
export function untestedNodeWarning(version = process.versions.node): string | undefined {
  const major = Number(version.split('.')[0]);
  if ((TESTED_NODE_MAJORS as readonly number[]).includes(major)) return undefined;
  return `svc: warning: Node.js ${version} is not a tested version (tested: ${TESTED_NODE_MAJORS.join(', ')}); svc may work, but nothing proves it here`;
}

/** How the start line, `svc status` and the log name the gateway's HTTP engine. */
export function describeEngine(name: 'uws' | 'node'): string {
  return name === 'uws' ? 'uWebSockets.js native' : 'node:http';
}
