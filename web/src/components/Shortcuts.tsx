import { useEffect, useState } from 'preact/hooks';
import { typing } from '../lib/focus';
import { route } from '../lib/router';
import { useStore } from '../lib/store';
import { Icon } from './Icon';
import { Modal } from './Modal';

const KEYS: Array<[keys: string[], what: string]> = [
  [['?'], 'Show this list'],
  [['/'], 'Search all chats'],
  [['Ctrl', 'K'], 'Search all chats, from anywhere (⌘K on a Mac)'],
  [['Enter'], 'Send the message'],
  [['Shift', 'Enter'], 'Start a new line in the message'],
  [['Esc'], 'Close a dialog, a panel or the chat list'],
  [['Esc'], 'In an approval: deny the tool call'],
  [['Home'], 'In the messages: go to the first one'],
  [['End'], 'In the messages: go to the newest one'],
  [['Tab'], 'Move to the next control (Shift+Tab: back)'],
];

/**
 * The keyboard shortcuts, listed in a dialog that "?" opens (outside a text field, where "?" is
 * text, and not over another dialog); it closes on Escape, its button, or another address.
 */
export function Shortcuts() {
  const [open, setOpen] = useState(false);
  // Another address (the Back button) leaves the list behind.
  const at = useStore(route);
  useEffect(() => setOpen(false), [at]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '?' || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
      if (typing(e.target) || (e.target as Element | null)?.closest?.('dialog')) return;
      e.preventDefault();
      setOpen(true);
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);
  if (!open) return null;
  return (
    <Modal labelledBy="shortcuts-title" testId="shortcuts" onClose={() => setOpen(false)}>
      <div class="side-head">
        <h3 id="shortcuts-title">Keyboard shortcuts</h3>
        <button
          type="button"
          class="icon"
          aria-label="Close the keyboard shortcuts"
          onClick={() => setOpen(false)}
        >
          <Icon name="close" />
        </button>
      </div>
      <table class="shortcuts">
        <tbody>
          {KEYS.map(([keys, what]) => (
            <tr key={`${keys.join('+')} ${what}`}>
              <th scope="row">
                {keys.map((k, i) => (
                  <span key={k}>
                    {i > 0 && ' + '}
                    <kbd>{k}</kbd>
                  </span>
                ))}
              </th>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Modal>
  );
}
