import { live, type LiveEvent } from './live';
import { Store } from './store';

export type ServerState = 'running' | 'draining';

/** The server's own state from the `server` topic: draining while a restart waits for turns. */
export const serverState = new Store<ServerState>('running');
/** Bumped whenever config or onboarding changes on the server, so views can reload. */
export const configVersion = new Store(0);

function onEvent(e: LiveEvent): void {
  if (e.type === 'draining') serverState.set('draining');
  else if (e.type === 'resumed') serverState.set('running');
  else if (e.type === 'config.updated' || e.type === 'onboard.updated')
    configVersion.set((n) => n + 1);
  else if (e.type === '$reset') {
    // A new server, or a reloaded topic: ask it where it stands.
    fetch('/api/health', { credentials: 'same-origin' })
      .then((r) => r.json())
      .then((h: { status?: string }) =>
        serverState.set(h.status === 'draining' ? 'draining' : 'running'),
      )
      .catch(() => undefined);
    configVersion.set((n) => n + 1);
  }
}

let watching = false;
export function watchServer(): void {
  if (watching) return;
  watching = true;
  live.on('server', onEvent);
}
