import { Store } from './store';

/** The app's address lives in the hash: #/chat/<id>, #/settings/<tab>, #/status, #/onboarding. */
export interface Route {
  view: string;
  arg: string | undefined;
  /** A third part: the message a chat opens at (#/chat/<id>/<message id>, from a search). */
  sub?: string | undefined;
}

function read(): Route {
  const parts = location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map(decodeURIComponent);
  return { view: parts[0] ?? 'chat', arg: parts[1], sub: parts[2] };
}

export const route = new Store<Route>(read());
addEventListener('hashchange', () => route.set(read()));

export function go(path: string, replace = false): void {
  const hash = `#/${path.replace(/^\/+/, '')}`;
  if (location.hash === hash) return;
  if (replace) {
    history.replaceState(null, '', hash);
    route.set(read());
  } else location.hash = hash;
}
