import { live } from '../lib/live';
import { route } from '../lib/router';
import { useStore } from '../lib/store';
import { ChatView } from './ChatView';
import { ConnectionBanner } from './ConnectionBanner';
import { SettingsView } from './SettingsView';
import { StatusView } from './StatusView';

const views = [
  ['chat', 'Chat'],
  ['settings', 'Settings'],
  ['status', 'Status'],
] as const;

/** The frame of the app: the top bar with its views, the connection banner, and the view. */
export function Shell() {
  const r = useStore(route);
  const conn = useStore(live.state);
  const view = views.some(([v]) => v === r.view) ? r.view : 'chat';
  return (
    <div class="shell" data-conn={conn}>
      <header class="topbar">
        <a class="brand" href="#/chat">
          svc
        </a>
        <nav>
          {views.map(([v, label]) => (
            <a key={v} href={`#/${v}`} class={view === v ? 'active' : ''} aria-current={view === v ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
      </header>
      <ConnectionBanner />
      {view === 'chat' && <ChatView id={r.arg} />}
      {view === 'settings' && <SettingsView tab={r.arg} />}
      {view === 'status' && <StatusView />}
    </div>
  );
}
