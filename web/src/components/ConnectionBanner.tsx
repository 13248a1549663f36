import { live } from '../lib/live';
import { serverState } from '../lib/server';
import { useStore } from '../lib/store';

/**
 * Says when the live connection is down or the server is restarting. The status region is always
 * there (empty and hidden when all is well): a screen reader only announces text put into a live
 * region that existed before it.
 */
export function ConnectionBanner() {
  const conn = useStore(live.state);
  const server = useStore(serverState);
  let text = '';
  if (conn === 'reconnecting')
    text = 'Connection lost: reconnecting… (the server may be restarting)';
  else if (server === 'draining')
    text =
      'The server is restarting: it finishes the running turns first and takes no new ones meanwhile.';
  return (
    <div
      class={`banner ${conn === 'online' ? 'warn' : 'down'}`}
      role="status"
      data-testid="conn-banner"
      data-state={text ? (conn === 'online' ? server : conn) : 'ok'}
    >
      {text}
    </div>
  );
}
