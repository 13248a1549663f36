import { useStore } from '../lib/store';
import { dismiss, toasts } from '../lib/toast';
import { Icon } from './Icon';

export function Toasts() {
  const list = useStore(toasts);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((t) => (
        <div key={t.id} class={`toast ${t.kind}`} data-testid="toast">
          <span>{t.text}</span>
          {t.action && (
            <button
              type="button"
              class="link"
              onClick={() => {
                dismiss(t.id);
                t.action!.run();
              }}
            >
              {t.action.label}
            </button>
          )}
          <button type="button" class="icon" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            <Icon name="close" />
          </button>
        </div>
      ))}
    </div>
  );
}
