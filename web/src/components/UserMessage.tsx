import type { Attachment } from '../lib/types';
import { bytes } from '../lib/format';
import { Icon } from './Icon';

/** What the user said, as plain text (never rendered as Markdown or HTML), with its attachments. */
export function UserMessage({
  text,
  attachments,
  pending = false,
  continuation = false,
}: {
  text: string;
  attachments?: Attachment[];
  pending?: boolean;
  continuation?: boolean;
}) {
  return (
    <div
      class={`msg user${pending ? ' pending' : ''}${continuation ? ' continuation' : ''}`}
      data-testid="user-message"
    >
      <div class="bubble">
        {continuation ? <span class="muted small">{text}</span> : text}
        {attachments && attachments.length > 0 && (
          <div class="attachments">
            {attachments.map((a) => (
              <a
                key={a.name}
                class="attachment"
                href={`/api/uploads/${encodeURIComponent(a.name)}`}
                target="_blank"
                rel="noopener noreferrer"
              >
                {a.mime?.startsWith('image/') ? (
                  <img
                    src={`/api/uploads/${encodeURIComponent(a.name)}`}
                    alt={a.original_name ?? a.name}
                    loading="lazy"
                  />
                ) : (
                  <Icon name="file" />
                )}
                <span>{a.original_name ?? a.name}</span>
                {a.size != null && <span class="muted small">{bytes(a.size)}</span>}
              </a>
            ))}
          </div>
        )}
      </div>
    </div>
  );
}
