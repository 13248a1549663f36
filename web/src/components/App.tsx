import { useEffect, useState } from 'preact/hooks';
import { authNeeded } from '../lib/api';
import { live } from '../lib/live';
import { go, route } from '../lib/router';
import { watchServer } from '../lib/server';
import { watchSessions } from '../lib/sessions';
import { useStore } from '../lib/store';
import type { OnboardStatus } from '../lib/types';
import { AccessPrompt } from './AccessPrompt';
import { Onboarding } from './Onboarding';
import { Shell } from './Shell';
import { Shortcuts } from './Shortcuts';
import { Toasts } from './Toasts';

type Phase = 'probing' | 'unreachable' | 'ready';

const SKIP_KEY = 'svc.onboarding.skipped';

// A rejected key comes back as /#access-key-rejected: remember it, and clean the address.
const rejected = location.hash === '#access-key-rejected';
if (rejected) history.replaceState(null, '', location.pathname + location.search);

/**
 * Decides what to show: the key prompt (401 from a probe), onboarding (first start), or the app.
 * The page cannot read its HttpOnly cookie, so it asks an authenticated route instead.
 */
export function App() {
  const [phase, setPhase] = useState<Phase>('probing');
  const [onboard, setOnboard] = useState<OnboardStatus | undefined>();
  const needKey = useStore(authNeeded);
  const r = useStore(route);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const probe = async () => {
      try {
        const res = await fetch('/api/status', {
          credentials: 'same-origin',
          headers: { Accept: 'application/json' },
        });
        if (stopped) return;
        if (res.status === 401) {
          authNeeded.set(true);
          setPhase('ready');
          return;
        }
        if (!res.ok) throw new Error(String(res.status));
        const ob = await fetch('/api/onboard/status', { credentials: 'same-origin' }).then((x) =>
          x.ok ? (x.json() as Promise<OnboardStatus>) : undefined,
        );
        if (stopped) return;
        setOnboard(ob);
        if (
          ob &&
          !ob.steps.completed &&
          localStorage.getItem(SKIP_KEY) !== '1' &&
          route.get().view !== 'onboarding'
        )
          go('onboarding', true);
        setPhase('ready');
        live.start();
        watchServer();
        watchSessions();
      } catch {
        if (stopped) return;
        setPhase('unreachable');
        timer = setTimeout(probe, 2000);
      }
    };
    void probe();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);

  if (needKey) return <AccessPrompt rejected={rejected} />;
  if (phase === 'probing') return <main class="center-page loading">Loading…</main>;
  if (phase === 'unreachable') {
    return (
      <main class="center-page">
        <div class="card narrow" role="alert">
          <h1>svc</h1>
          <p>The server cannot be reached right now. Trying again…</p>
        </div>
      </main>
    );
  }
  if (r.view === 'onboarding') {
    return (
      <>
        <Onboarding
          initial={onboard}
          onDone={() => {
            localStorage.removeItem(SKIP_KEY);
            go('chat', true);
          }}
          onSkip={() => {
            localStorage.setItem(SKIP_KEY, '1');
            go('chat', true);
          }}
        />
        <Toasts />
      </>
    );
  }
  return (
    <>
      <Shell />
      <Shortcuts />
      <Toasts />
    </>
  );
}
