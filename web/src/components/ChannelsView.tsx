import { useEffect, useState } from 'preact/hooks';
import { type Answer, api, describe } from '../lib/api';
import { when } from '../lib/format';
import { live } from '../lib/live';
import { toast } from '../lib/toast';
import { action } from '../lib/action';
import type { Schemas } from '../lib/types';
import { channelTestLabels } from '../../../src/shared/form-labels';

/** A platform svc can connect, with its form's fields (GET /api/channels/available). */
type Platform = Answer<'GET', '/api/channels/available'>['platforms'][number];
type Field = Platform['fields'][number];
/** A platform's row in GET /api/channels: its adapter's status and its config. */
type Channel = Schemas['Channel'];
type Pairing = Schemas['Pairing'];
/** A QR login's state. */
type Login = Schemas['ChannelLogin'];

/** A channel's saved setting, by the field name its platform's form gives. */
const saved = (c: Channel | undefined, name: string): unknown => {
  const fields: Record<string, unknown> | undefined = c?.fields;
  return fields?.[name];
};

const PLATFORM = /^[a-z]{1,32}$/;
/** A platform's name as a path parameter, checked first. */
const on = (p: string) => {
  if (!PLATFORM.test(p)) throw new Error(`"${p}" is not a platform name.`);
  return { params: { platform: p } };
};
const STATE_WORDS: Record<Channel['state'], string> = {
  starting: 'starting',
  running: 'running',
  stopped: 'stopped',
  error: 'error',
  needs_login: 'needs login',
};

/**
 * The Channels page: every platform svc can connect, each with its state (live, on the
 * `channels` topic) and the reason in words when it fails; connect from the platform's field
 * list (secrets are write-only), the QR login (WeChat, WhatsApp) shown live, pairing requests to approve,
 * a test message, disable and disconnect (to the trash).
 */
export function ChannelsView() {
  const [platforms, setPlatforms] = useState<Platform[] | undefined>();
  const [channels, setChannels] = useState<Record<string, Channel>>({});
  const [pairings, setPairings] = useState<Record<string, Pairing[]>>({});
  const [logins, setLogins] = useState<Record<string, Login>>({});
  const setLogin = (l: Login) => setLogins((all) => ({ ...all, [l.platform]: l }));
  const [error, setError] = useState('');
  /** The one platform whose form is open: five forms at once are a wall of fields. */
  const [open, setOpen] = useState<string | undefined>();

  const load = async () => {
    try {
      const [avail, list] = await Promise.all([
        api('GET', '/api/channels/available'),
        api('GET', '/api/channels'),
      ]);
      setPlatforms(avail.platforms);
      setChannels(Object.fromEntries(list.channels.map((c) => [c.platform, c])));
      const pairs = await Promise.all(
        list.channels.map(
          async (c) =>
            [
              c.platform,
              (await api('GET', '/api/channels/{platform}/pairings', on(c.platform))).items,
            ] as const,
        ),
      );
      setPairings(Object.fromEntries(pairs));
      setError('');
    } catch (err) {
      setError(describe(err));
    }
  };
  /** The QR login of every platform that logs in by one (messenger, whatsapp): one panel each. */
  const loadLogin = async (platform: string) => {
    try {
      setLogin(await api('GET', '/api/channels/{platform}/login', on(platform)));
    } catch {
      // not configured, or the worker is starting: nothing to show yet
    }
  };
  const qrPlatforms = (platforms ?? []).filter((p) => p.login === 'qr').map((p) => p.platform);

  useEffect(() => {
    void load();
    return live.on('channels', (e) => {
      // Without its QR code when that was too big for an event: the login route has it.
      if (e.type === 'channels.login')
        e.data.truncated ? void loadLogin(e.data.platform) : setLogin(e.data);
      void load();
    });
  }, []);
  useEffect(() => {
    for (const p of qrPlatforms) void loadLogin(p);
  }, [qrPlatforms.join(',')]);

  // While a code is up, the state is also polled: the platform moves on by itself (expiry).
  const waiting = Object.values(logins)
    .filter((l) => l.status === 'pending' || l.status === 'scanned')
    .map((l) => l.platform);
  useEffect(() => {
    if (waiting.length === 0) return;
    const t = setInterval(() => void Promise.all(waiting.map(loadLogin)), 2000);
    return () => clearInterval(t);
  }, [waiting.join(',')]);

  const act = action(load, setError);

  return (
    <div class="page stack" data-testid="channels-view">
      <h1 class="page-title">Channels</h1>
      <p class="muted">
        Talk to the agent from a messaging app. Only people you allow (or approve by pairing code)
        reach it.
      </p>
      {error && (
        <p class="error-state" role="alert">
          {error}
        </p>
      )}
      {!platforms && !error && <p class="loading">Loading…</p>}
      {platforms?.map((p) => {
        const c = channels[p.platform];
        return (
          <section
            key={p.platform}
            class="card stack"
            data-testid="channel"
            data-platform={p.platform}
            aria-labelledby={`ch-${p.platform}`}
          >
            <div class="row">
              <div class="grow">
                <h2 id={`ch-${p.platform}`}>{p.label}</h2>
                {c ? (
                  <>
                    <span
                      class={`chip status-${c.state}`}
                      role="status"
                      data-testid="channel-state"
                    >
                      {STATE_WORDS[c.state]}
                    </span>
                    <span class="muted small">
                      {c.account && ` ${c.account}`}
                      {c.connected_since && ` · connected ${when(c.connected_since)}`}
                      {c.last_message_at && ` · last message ${when(c.last_message_at)}`}
                    </span>
                  </>
                ) : (
                  <span class="muted small">Not connected.</span>
                )}
              </div>
              {c && (
                <div class="actions">
                  <button
                    type="button"
                    onClick={() =>
                      act(() =>
                        api('POST', '/api/channels/{platform}', {
                          ...on(p.platform),
                          body: { enabled: !c.enabled },
                        }),
                      )
                    }
                  >
                    {c.enabled ? 'Disable' : 'Enable'}
                  </button>
                  <button
                    type="button"
                    class="danger"
                    onClick={() =>
                      act(
                        () => api('DELETE', '/api/channels/{platform}', on(p.platform)),
                        `Disconnected ${p.label}; its settings are in the trash.`,
                      )
                    }
                  >
                    Disconnect
                  </button>
                </div>
              )}
            </div>
            {c?.error && (
              <p class="error small" data-testid="channel-error">
                {c.error}
              </p>
            )}
            {p.login === 'qr' && c?.enabled && (
              <QrLogin
                platform={p.platform}
                label={p.label}
                login={logins[p.platform]}
                onChange={setLogin}
                onError={setError}
              />
            )}
            {c && (pairings[p.platform] ?? []).some((x) => x.status === 'pending') && (
              <div class="stack" data-testid="pairings">
                <h3>Pairing requests</h3>
                <ul class="plain stack">
                  {(pairings[p.platform] ?? [])
                    .filter((x) => x.status === 'pending')
                    .map((x) => (
                      <li key={x.code} class="row" data-testid="pairing" data-code={x.code}>
                        <span class="grow">
                          <strong>{x.name}</strong>{' '}
                          <span class="muted small">({x.user_id}) · code</span>{' '}
                          <code>{x.code}</code>
                        </span>
                        <button
                          type="button"
                          class="primary"
                          onClick={() =>
                            act(
                              () =>
                                api('POST', '/api/channels/{platform}/pairings', {
                                  ...on(p.platform),
                                  body: { code: x.code, decision: 'approve' },
                                }),
                              `${x.name} may talk to the agent now.`,
                            )
                          }
                        >
                          Approve
                        </button>
                        <button
                          type="button"
                          onClick={() =>
                            act(() =>
                              api('POST', '/api/channels/{platform}/pairings', {
                                ...on(p.platform),
                                body: { code: x.code, decision: 'reject' },
                              }),
                            )
                          }
                        >
                          Reject
                        </button>
                      </li>
                    ))}
                </ul>
              </div>
            )}
            {c?.state === 'running' && <TestMessage platform={p.platform} onError={setError} />}
            <button
              type="button"
              class="disclosure"
              aria-expanded={open === p.platform}
              aria-controls={`ch-form-${p.platform}`}
              onClick={() => setOpen(open === p.platform ? undefined : p.platform)}
            >
              <span class="disclosure-mark" aria-hidden="true">
                ▸
              </span>
              {c ? `${p.label} settings` : `Set up ${p.label}`}
            </button>
            {open === p.platform && (
              <ChannelForm
                platform={p}
                channel={c}
                onSaved={(msg) => {
                  setOpen(undefined);
                  void act(async () => undefined, msg);
                }}
              />
            )}
          </section>
        );
      })}
    </div>
  );
}

function ChannelForm({
  platform,
  channel,
  onSaved,
}: {
  platform: Platform;
  channel: Channel | undefined;
  onSaved: (message: string) => void;
}) {
  const initial = () =>
    Object.fromEntries(
      platform.fields.map((f) => [f.name, f.secret ? '' : valueText(saved(channel, f.name))]),
    );
  const [values, setValues] = useState<Record<string, string>>(initial);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => setValues(initial()), [channel?.fields && JSON.stringify(channel.fields)]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      // An empty secret keeps the saved one; other empty fields mean the default.
      const body = Object.fromEntries(
        Object.entries(values)
          .filter(([, v]) => v.trim() !== '')
          .map(([k, v]) => [k, v.trim()]),
      );
      await api('POST', '/api/channels/{platform}', {
        ...on(platform.platform),
        body: channel ? body : { ...body, enabled: true },
      });
      onSaved(channel ? `Saved ${platform.label}.` : `Connecting ${platform.label}…`);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };

  const id = (f: Field) => `ch-${platform.platform}-${f.name}`;
  const set = (name: string) => (e: Event) =>
    setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).value });
  const textProps = (f: Field) => ({
    id: id(f),
    name: f.name,
    autoComplete: 'off',
    spellcheck: false,
    value: values[f.name] ?? '',
    onInput: set(f.name),
    'aria-describedby': `${id(f)}-help`,
  });
  return (
    <form
      class="stack"
      id={`ch-form-${platform.platform}`}
      onSubmit={submit}
      data-testid="channel-form"
    >
      {platform.fields.map((f) => (
        <div key={f.name} class="field">
          <label for={id(f)}>
            {f.label}
            {f.required ? '' : <span class="muted small"> (optional)</span>}
          </label>
          {f.choices ? (
            <select
              id={id(f)}
              name={f.name}
              value={values[f.name] || f.default || f.choices[0]?.value}
              onChange={set(f.name)}
              aria-describedby={`${id(f)}-help`}
            >
              {f.choices.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ))}
            </select>
          ) : f.secret ? (
            <input
              {...textProps(f)}
              type="password"
              required={f.required && !saved(channel, f.name)}
              placeholder={saved(channel, f.name) ? 'saved; type to replace' : ''}
            />
          ) : (
            <input {...textProps(f)} type="text" required={f.required} />
          )}
          <span class="muted small" id={`${id(f)}-help`}>
            {f.description}
          </span>
        </div>
      ))}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div>
        <button type="submit" class="primary" disabled={busy}>
          {channel ? 'Save' : 'Connect'}
        </button>
      </div>
    </form>
  );
}

function valueText(v: unknown): string {
  if (Array.isArray(v)) return v.join(', ');
  return typeof v === 'string' ? v : '';
}

function QrLogin({
  platform,
  label,
  login,
  onChange,
  onError,
}: {
  platform: string;
  label: string;
  login: Login | undefined;
  onChange: (l: Login) => void;
  onError: (m: string) => void;
}) {
  const at = '/api/channels/{platform}/login';
  const run = async (fn: () => Promise<Login>) => {
    try {
      onChange(await fn());
    } catch (err) {
      onError(describe(err));
    }
  };
  const status = login?.status ?? 'idle';
  const waiting = status === 'pending' || status === 'scanned';
  return (
    <div class="stack" data-testid="qr-login">
      <p role="status" data-testid="login-status">
        {status === 'pending' && `Scan this code with ${label} on your phone.`}
        {status === 'scanned' && 'Scanned: confirm the login on your phone.'}
        {(status === 'confirmed' || status === 'logged_in') &&
          `Logged in as ${login?.user_id ?? `your ${label} account`}.`}
        {status === 'expired' && `The code expired. ${login?.error ?? ''}`}
        {status === 'failed' && (login?.error ?? 'The login failed.')}
        {status === 'cancelled' && 'The login was cancelled.'}
        {status === 'idle' && 'Not logged in.'}
      </p>
      {waiting && login?.qr_png && (
        <img
          src={login.qr_png}
          alt={`${label} login QR code`}
          width={220}
          height={220}
          data-testid="qr-image"
          data-url={login.qr_url ?? ''}
        />
      )}
      <div class="row">
        {!waiting && (
          <button
            type="button"
            class="primary"
            onClick={() =>
              run(() =>
                api('POST', at, {
                  ...on(platform),
                  body: status === 'logged_in' || status === 'confirmed' ? { force: true } : {},
                }),
              )
            }
          >
            {status === 'logged_in' || status === 'confirmed'
              ? 'Log in again'
              : 'Log in with a QR code'}
          </button>
        )}
        {waiting && (
          <button type="button" onClick={() => run(() => api('DELETE', at, on(platform)))}>
            Cancel
          </button>
        )}
        {(status === 'logged_in' || status === 'confirmed') && (
          <button
            type="button"
            class="danger"
            onClick={() => run(() => api('DELETE', at, on(platform)))}
          >
            Log out
          </button>
        )}
      </div>
    </div>
  );
}

function TestMessage({ platform, onError }: { platform: string; onError: (m: string) => void }) {
  const [chat, setChat] = useState('');
  const [result, setResult] = useState('');
  const send = async (e: Event) => {
    e.preventDefault();
    setResult('');
    try {
      const r = await api('POST', '/api/channels/{platform}/test', {
        ...on(platform),
        body: chat.trim() ? { chat_id: chat.trim() } : {},
      });
      setResult(`Sent a test message to chat ${r.chat_id}.`);
    } catch (err) {
      onError(describe(err));
    }
  };
  return (
    <form class="row" onSubmit={send} data-testid="channel-test">
      <label class="field grow">
        {channelTestLabels.chat_id} (empty: the latest chat)
        <input value={chat} onInput={(e) => setChat((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit">Send test message</button>
      {result && (
        <span role="status" class="muted small">
          {result}
        </span>
      )}
    </form>
  );
}
