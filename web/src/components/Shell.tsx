import { useEffect, useRef, useState } from 'preact/hooks';
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
import { Icon } from './Icon';

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
 * On a phone the views are behind a menu button (styles.css), so the top bar stays one line.
 */
export function Shell() {
  const r = useStore(route);
  const conn = useStore(live.state);
  const view =
    r.view === 'search' && r.arg ? 'search' : views.some(([v]) => v === r.view) ? r.view : 'chat';
  const menu = useMenu(`${r.view}/${r.arg ?? ''}`);
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
        <button
          ref={menu.button}
          type="button"
          class="ghost menu-button"
          aria-expanded={menu.open}
          aria-controls="views-nav"
          onClick={() => menu.setOpen(!menu.open)}
          data-testid="menu-button"
        >
          <Icon name="menu" />
          Menu
        </button>
        <nav
          id="views-nav"
          ref={menu.nav}
          aria-label="Views"
          class={menu.open ? 'open' : ''}
          onFocusOut={(e) => {
            const to = e.relatedTarget as Node | null;
            if (to && !menu.nav.current?.contains(to) && !menu.button.current?.contains(to))
              menu.setOpen(false);
          }}
        >
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

/**
 * The phone's menu of views: Escape closes it and gives focus back to its button, a click or tab
 * outside closes it, and choosing a view closes it and puts focus in the new view.
 */
function useMenu(where: string) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const nav = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setOpen(false);
      button.current?.focus();
    };
    const onDown = (e: PointerEvent) => {
      const t = e.target as Node;
      if (!nav.current?.contains(t) && !button.current?.contains(t)) setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onDown);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onDown);
    };
  }, [open]);
  useEffect(() => {
    if (!open) return;
    // Children's effects ran first, so the new view (and its focus home) is in the page.
    const chose = nav.current?.contains(document.activeElement) === true;
    setOpen(false);
    if (chose) focusHome();
  }, [where]);
  return { open, setOpen, button, nav };
}
