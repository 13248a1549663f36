import { focusHome } from '../lib/focus';
import { live } from '../lib/live';
import { route } from '../lib/router';
import { useStore } from '../lib/store';
import { ChatView } from './ChatView';
import { ConnectionBanner } from './ConnectionBanner';
import { McpView } from './McpView';
import { SchedulesView } from './SchedulesView';
import { ChannelsView } from './ChannelsView';
import { SettingsView } from './SettingsView';
import { SkillsView } from './SkillsView';
import { StatusView } from './StatusView';
import { UsageView } from './UsageView';
import { WorkflowsView } from './WorkflowsView';
import { BrowserView } from './BrowserView';
import { VersionBadge } from './VersionBadge';
import { SearchBox } from './SearchBox';
import { SearchView } from './SearchView';

const views = [
  ['chat', 'Chat'],
  ['settings', 'Settings'],
  ['mcp', 'MCP'],
  ['skills', 'Skills'],
  ['workflows', 'Workflows'],
  ['schedules', 'Schedules'],
  ['channels', 'Channels'],
  ['browser', 'Browser'],
  ['usage', 'Usage'],
  ['status', 'Status'],
] as const;

/**
 * The frame of the app: a skip link, the top bar with its views, the connection banner, and the
 * view in <main> (a view adds one entry to `views` and renders inside main, without its own).
 */
export function Shell() {
  const r = useStore(route);
  const conn = useStore(live.state);
  const view =
    r.view === 'search' && r.arg ? 'search' : views.some(([v]) => v === r.view) ? r.view : 'chat';
  return (
    <div class="shell" data-conn={conn}>
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          focusHome();
        }}
      >
        {view === 'chat' ? 'Skip to the message box' : 'Skip to the content'}
      </a>
      <header class="topbar">
        <a class="brand" href="#/chat">
          svc
        </a>
        <nav aria-label="Views">
          {views.map(([v, label]) => (
            <a
              key={v}
              href={`#/${v}`}
              class={view === v ? 'active' : ''}
              aria-current={view === v ? 'page' : undefined}
            >
              {label}
            </a>
          ))}
        </nav>
        <SearchBox />
        <VersionBadge />
      </header>
      <ConnectionBanner />
      <main id="main" class={`view-${view}`} tabIndex={-1}>
        {view === 'chat' && <ChatView id={r.arg} focus={r.sub} />}
        {view === 'search' && <SearchView q={r.arg ?? ''} />}
        {view === 'settings' && <SettingsView tab={r.arg} />}
        {view === 'status' && <StatusView />}
        {view === 'mcp' && <McpView />}
        {view === 'skills' && <SkillsView />}
        {view === 'workflows' && <WorkflowsView />}
        {view === 'schedules' && <SchedulesView />}
        {view === 'channels' && <ChannelsView />}
        {view === 'browser' && <BrowserView />}
        {view === 'usage' && <UsageView />}
      </main>
    </div>
  );
}
