import { ModelsPanel } from './ModelsPanel';
import { ProfilePanel } from './ProfilePanel';
import { ToolsPanel } from './ToolsPanel';
import { TrashPanel } from './TrashPanel';

const tabs = [
  ['models', 'Models'],
  ['trash', 'Trash'],
  ['profile', 'Profile & memory'],
  ['tools', 'Tools'],
] as const;

export function SettingsView({ tab }: { tab: string | undefined }) {
  const current = tabs.some(([t]) => t === tab) ? tab : 'models';
  return (
    <div class="page settings">
      <h1 class="page-title">Settings</h1>
      <nav class="tabs" aria-label="Settings">
        {tabs.map(([t, label]) => (
          <a
            key={t}
            href={`#/settings/${t}`}
            class={current === t ? 'active' : ''}
            aria-current={current === t ? 'page' : undefined}
          >
            {label}
          </a>
        ))}
      </nav>
      {current === 'models' && <ModelsPanel />}
      {current === 'trash' && <TrashPanel />}
      {current === 'profile' && <ProfilePanel />}
      {current === 'tools' && <ToolsPanel />}
    </div>
  );
}
