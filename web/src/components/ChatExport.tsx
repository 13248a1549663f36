import { urlOf } from '../lib/api';

/**
 * The chat as a file to keep or share: Markdown to read, JSON to import again (here or on another
 * svc). Plain links: the server answers them as attachments, so the browser downloads them with
 * the chat's title as the name, and a keyboard or screen reader uses them like any link.
 */
export function ChatExport({ sessionId }: { sessionId: string }) {
  const url = (format: 'md' | 'json') =>
    urlOf('/api/sessions/{id}/export', { id: sessionId }, { format });
  return (
    <section aria-labelledby="export-title">
      <h4 id="export-title">Export</h4>
      <ul class="plain">
        <li>
          <a href={url('md')} download data-testid="export-md">
            Download as Markdown
          </a>{' '}
          <span class="muted small">to read and share</span>
        </li>
        <li>
          <a href={url('json')} download data-testid="export-json">
            Download as JSON
          </a>{' '}
          <span class="muted small">to import again (Chats → Import chat)</span>
        </li>
      </ul>
    </section>
  );
}
