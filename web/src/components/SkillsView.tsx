import { useEffect, useRef, useState } from 'preact/hooks';
import { type Answer, api, describe, isId, postForm, urlOf } from '../lib/api';
import { bytes } from '../lib/format';
import { live } from '../lib/live';
import { toast } from '../lib/toast';
import { action } from '../lib/action';
import type { Schemas } from '../lib/types';

type SkillView = Schemas['Skill'];
type Imported = Answer<'POST', '/api/skills/import'>;

/**
 * The Skills page: every skill (built-in and user) with a switch, its size, an export link and,
 * for user skills, delete to the trash; invalid ones say why. Import a zip by dropping it or
 * choosing it, or a folder or zip by its path on the server's machine. Live via the `skills` topic.
 */
export function SkillsView() {
  const [skills, setSkills] = useState<SkillView[] | undefined>();
  const [error, setError] = useState('');
  const load = () =>
    api('GET', '/api/skills').then(
      (r) => {
        setSkills(r.items);
        setError('');
      },
      (err) => setError(describe(err)),
    );
  useEffect(() => {
    void load();
    return live.on('skills', () => void load());
  }, []);

  const act = action(load, setError);

  const remove = (s: SkillView) =>
    act(async () => {
      const r = await api('DELETE', '/api/skills/{name}', { params: { name: s.name } });
      toast(`Moved "${s.name}" to the trash.`, {
        action: {
          label: 'Undo',
          run: () =>
            void act(() => api('POST', '/api/trash/{id}/restore', { params: { id: r.trash_id } })),
        },
      });
    });

  return (
    <div class="page stack" data-testid="skills-view">
      <h1 class="page-title">Skills</h1>
      <p class="muted">
        What the agent knows how to do: each skill is a folder with a SKILL.md. The enabled, valid
        ones are listed to the model, which loads one when it needs it; a change is seen by the next
        turn.
      </p>
      {error && (
        <p class="error-state" role="alert">
          {error}
        </p>
      )}
      {!skills && !error && <p class="loading">Loading…</p>}
      <ul class="plain stack" aria-label="Skills">
        {skills?.map((s) => {
          // A folder whose name is no valid id offers no actions.
          const named = isId(s.name);
          return (
            <li key={s.name} class="card stack row-card" data-testid="skill" data-name={s.name}>
              <div class="row">
                <div class="grow">
                  <strong>{s.name}</strong>{' '}
                  <span class="chip">{s.source === 'builtin' ? 'built-in' : 'yours'}</span>
                  {!s.valid && (
                    <>
                      {' '}
                      <span class="chip invalid">invalid</span>
                    </>
                  )}
                  <div class="muted small">
                    {s.description || 'No description.'} · {s.file_count} file
                    {s.file_count === 1 ? '' : 's'}, {bytes(s.size_bytes)}
                  </div>
                </div>
                <div class="actions">
                  <label class="check">
                    <input
                      type="checkbox"
                      role="switch"
                      checked={s.enabled}
                      disabled={!named}
                      onChange={(e) =>
                        named &&
                        act(() =>
                          api('PATCH', '/api/skills/{name}/toggle', {
                            params: { name: s.name },
                            body: { enabled: e.currentTarget.checked },
                          }),
                        )
                      }
                      data-testid="skill-toggle"
                    />
                    Enabled<span class="sr-only"> ({s.name})</span>
                  </label>
                  {named && (
                    <a
                      class="button"
                      href={urlOf('/api/skills/{name}/export', { name: s.name })}
                      download={`${s.name}.zip`}
                      data-testid="skill-export"
                    >
                      Export<span class="sr-only"> {s.name}</span>
                    </a>
                  )}
                  {s.source === 'user' && named && (
                    <button type="button" class="danger" onClick={() => remove(s)}>
                      Delete<span class="sr-only"> {s.name}</span>
                    </button>
                  )}
                </div>
              </div>
              {!s.valid && s.why && (
                <p class="error small" data-testid="skill-why">
                  Not offered to the model: {s.why}
                </p>
              )}
            </li>
          );
        })}
      </ul>
      <ImportSkill onImported={() => void load()} />
    </div>
  );
}

/** Import: a zip dropped on the zone or chosen with the button, or a path on the server's machine. */
function ImportSkill({ onImported }: { onImported: () => void }) {
  const [force, setForce] = useState(false);
  const [source, setSource] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [over, setOver] = useState(false);
  const picker = useRef<HTMLInputElement>(null);

  const run = async (fn: () => Promise<Imported>) => {
    setBusy(true);
    setError('');
    try {
      const r = await fn();
      toast(
        r.replaced ? `Imported "${r.name}"; the old one is in the trash.` : `Imported "${r.name}".`,
      );
      onImported();
      return true;
    } catch (err) {
      setError(describe(err));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const sendZip = (file: File | undefined) => {
    if (!file) return;
    if (!/\.zip$/i.test(file.name)) {
      setError(`"${file.name}" is not a .zip file; a skill comes as a zip of its folder.`);
      return;
    }
    const form = new FormData();
    if (force) form.append('force', 'true');
    form.append('file', file, file.name);
    void run(() => postForm('/api/skills/import', form));
  };

  const fromPath = async (e: Event) => {
    e.preventDefault();
    if (
      await run(() =>
        api('POST', '/api/skills/import', {
          body: { source: source.trim(), ...(force ? { force: true } : {}) },
        }),
      )
    )
      setSource('');
  };

  return (
    <section class="card stack" aria-labelledby="skill-import-title" data-testid="skill-import">
      <h2 id="skill-import-title">Import a skill</h2>
      <div
        class={`dropzone${over ? ' over' : ''}`}
        data-testid="skill-drop"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          sendZip(e.dataTransfer?.files[0]);
        }}
      >
        <p>Drop a skill's .zip here, or</p>
        <button type="button" disabled={busy} onClick={() => picker.current?.click()}>
          Choose a zip…
        </button>
        <input
          ref={picker}
          type="file"
          accept=".zip,application/zip"
          hidden
          data-testid="skill-file"
          onChange={(e) => {
            sendZip(e.currentTarget.files?.[0]);
            e.currentTarget.value = '';
          }}
        />
      </div>
      <form class="row end" onSubmit={fromPath}>
        <label class="field grow">
          Or a path on the server's machine (a skill folder or a .zip)
          <input
            value={source}
            placeholder="/home/me/skills/weather"
            onInput={(e) => setSource(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={busy || !source.trim()}>
          Import
        </button>
      </form>
      <label class="check">
        <input
          type="checkbox"
          checked={force}
          onChange={(e) => setForce(e.currentTarget.checked)}
        />{' '}
        Replace a skill of the same name (the old one goes to the trash)
      </label>
      {busy && <p class="muted">Importing…</p>}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
