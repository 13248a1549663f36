/** How the start line, `svc status` and the log name the gateway's HTTP engine. */
export function describeEngine(name: 'uws' | 'node'): string {
  return name === 'uws' ? 'uWebSockets.js native' : 'node:http';
}
