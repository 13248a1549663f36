import { useState } from 'preact/hooks';
import { type Answer, api, describe, needsKey } from '../lib/api';
import { toast } from '../lib/toast';
import { KeyUnlock } from './KeyUnlock';

/** GET /api/onboard/setup: what onboarding's last steps show. */
export type Setup = Answer<'GET', '/api/onboard/setup'>;

const OS_NAMES: Record<string, string> = { linux: 'Linux', darwin: 'macOS', win32: 'Windows' };

/** A command to run in a terminal, with a Copy button. */
function Command({ text, label }: { text: string; label: string }) {
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      toast('Copied.');
    } catch {
      toast('The browser did not allow copying; select the command instead.');
    }
  };
  return (
    <div class="setup-command">
      <code data-testid="setup-command">{text}</code>
      <button type="button" onClick={() => void copy()} aria-label={`Copy ${label}`}>
        Copy
      </button>
    </div>
  );
}

export function ServiceStep({ setup }: { setup: Setup }) {
  const os = OS_NAMES[setup.service.platform] ?? setup.service.platform;
  return setup.service.command ? (
    <div class="stack" data-testid="setup-service">
      <p>
        Now svc runs as long as the terminal that started it. On {os}, one command lets the system
        start it when you log in and again after a crash. Run it in a terminal on this machine:
      </p>
      <Command text={setup.service.command} label="the install command" />
      <p class="muted small">
        {setup.service.platform === 'darwin'
          ? 'It writes a launchd agent (~/Library/LaunchAgents/dev.svc.serve.plist).'
          : 'It writes a systemd user service (~/.config/systemd/user/svc.service).'}{' '}
        <code>svc service status</code> says whether it runs; <code>svc service uninstall</code>{' '}
        removes it and keeps your data.
      </p>
    </div>
  ) : (
    <p data-testid="setup-service">
      svc has no service manager to use on {os}. Keep <code>svc serve -d</code> running instead.
    </p>
  );
}

export function PhoneStep({ setup }: { setup: Setup }) {
  const [shown, setShown] = useState<Answer<'GET', '/api/onboard/phone'> | undefined>();
  const [key, setKey] = useState<{ rejected: boolean } | undefined>();
  const [error, setError] = useState('');
  const show = async (afterKey = false) => {
    setError('');
    try {
      setShown(await api('GET', '/api/onboard/phone'));
      setKey(undefined);
    } catch (err) {
      if (needsKey(err)) setKey({ rejected: afterKey });
      else setError(describe(err));
    }
  };
  const { phone } = setup;
  return (
    <div class="stack" data-testid="setup-phone">
      {phone.reachable ? (
        <>
          <p>A phone on the same network (Wi-Fi) opens svc at:</p>
          <ul class="plain" aria-label="Addresses for a phone">
            {phone.addresses.map((a) => (
              <li key={a}>
                <code>{a}</code>
              </li>
            ))}
          </ul>
          <p>It asks for the access key once, then remembers it.</p>
        </>
      ) : (
        <>
          <p>
            svc listens only on this machine now ({phone.listen ?? 'the loopback address'}), so a
            phone cannot reach it. To let a phone on the same network in, start svc on every
            interface (it then asks everyone but this machine for the key):
          </p>
          <Command text={phone.listen_command} label="the command" />
          {setup.service.command_lan && (
            <p class="muted small">
              As a service: <code>{setup.service.command_lan}</code>
            </p>
          )}
        </>
      )}
      <p class="muted small">
        The key is a password for svc: whoever has it controls the agent. <code>svc key show</code>{' '}
        prints it with the address in a terminal here.
      </p>
      {error && (
        <p class="error small" role="alert">
          {error}
        </p>
      )}
      {shown ? (
        <div class="stack" data-testid="phone-key">
          <img
            src={shown.qr_png}
            alt="QR code of the address with the access key"
            width={240}
            height={240}
          />
          <p class="small">
            Scan it with the phone's camera, or open <code>{shown.url}</code>
          </p>
          <div>
            <button type="button" onClick={() => setShown(undefined)}>
              Hide the key
            </button>
          </div>
        </div>
      ) : key ? (
        <KeyUnlock
          what="Showing the access key"
          rejected={key.rejected}
          onUnlocked={() => show(true)}
        />
      ) : (
        <div>
          <button type="button" onClick={() => void show()}>
            Show the address with the key (QR code)
          </button>
        </div>
      )}
    </div>
  );
}

export function SandboxStep({ setup, onCheck }: { setup: Setup; onCheck: () => void }) {
  const { state, message } = setup.sandbox;
  return (
    <div class="stack" data-testid="setup-sandbox">
      <p role="status">
        <span class={`chip status-${state === 'on' ? 'connected' : 'error'}`}>
          {state === 'on' ? 'sandbox on' : state === 'off' ? 'sandbox off' : 'no sandbox'}
        </span>{' '}
        {state === 'on'
          ? 'Commands the agent runs stay inside the sandbox: they write only to their working folder and temp, and cannot read svc’s keys.'
          : 'Commands the agent runs are not sandboxed, so svc asks before more of them.'}
      </p>
      {state !== 'on' && (
        <p class="small" data-testid="sandbox-fix">
          {message}
        </p>
      )}
      <div>
        <button type="button" onClick={onCheck}>
          Check again
        </button>
      </div>
    </div>
  );
}
