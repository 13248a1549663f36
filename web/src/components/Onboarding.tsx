import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, describe } from '../lib/api';
import type { ModelEntry, OnboardStatus, Provider, TestResult as Result } from '../lib/types';
import { ModelForm } from './ModelForm';
import { ProfileForm } from './ProfileForm';
import { PhoneStep, SandboxStep, ServiceStep, type Setup } from './SetupSteps';
import { TestResult } from './TestResult';

type Step = 'model' | 'lite' | 'profile' | 'service' | 'phone' | 'sandbox' | 'finish';
const steps: Array<[Step, string]> = [
  ['model', 'Model'],
  ['lite', 'Lite model'],
  ['profile', 'Profile'],
  ['service', 'Service'],
  ['phone', 'Phone'],
  ['sandbox', 'Sandbox'],
  ['finish', 'Finish'],
];
/** The steps after the model's, with their headings; each is optional and moves on with Next. */
const after: Partial<Record<Step, Step>> = {
  lite: 'profile',
  profile: 'service',
  service: 'phone',
  phone: 'sandbox',
  sandbox: 'finish',
};

/**
 * First start: pick a provider and model, give the key, test it (showing why it fails), put it in
 * the default slot; then, each skippable, a lite model (starting from the main model's provider),
 * the profile files, running svc as a service, reaching it from a phone, and the sandbox's state
 * with its fix; then finish.
 */
export function Onboarding({
  initial,
  onDone,
  onSkip,
}: {
  initial: OnboardStatus | undefined;
  onDone: () => void;
  onSkip: () => void;
}) {
  const [providers, setProviders] = useState<Provider[] | undefined>();
  const [models, setModels] = useState<ModelEntry[]>([]);
  const [status, setStatus] = useState<OnboardStatus | undefined>(initial);
  const [step, setStep] = useState<Step>(initial?.steps.model_tested ? 'lite' : 'model');
  const [test, setTest] = useState<Result | undefined>();
  const [liteTest, setLiteTest] = useState<Result | undefined>();
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  // The form waits for the saved models too: rendered before them, it would be re-made for the
  // saved default when they arrive, and take the keyboard user's focus with it.
  const [loaded, setLoaded] = useState(false);
  const [setup, setSetup] = useState<Setup | undefined>();
  const loadSetup = () =>
    api('GET', '/api/onboard/setup').then(setSetup, (err) => setError(describe(err)));
  useEffect(() => {
    if ((step === 'service' || step === 'phone' || step === 'sandbox') && !setup) void loadSetup();
  }, [step]);

  const refresh = async () => {
    const [m, s] = await Promise.all([
      api('GET', '/api/config/models'),
      api('GET', '/api/onboard/status'),
    ]);
    setModels(m.items);
    setStatus(s);
    return s;
  };

  useEffect(() => {
    api('GET', '/api/providers').then(
      (r) => setProviders(r.items),
      (err) => setError(describe(err)),
    );
    refresh()
      .catch((err) => setError(describe(err)))
      .finally(() => setLoaded(true));
  }, []);

  // A new step takes focus at its heading: the button that led there is gone, or (re-used by the
  // diff) now means something else. A layout effect moves focus in the same task as the render,
  // so no one ever sees the new step with focus still on the old button.
  const heading = useRef<HTMLHeadingElement>(null);
  const first = useRef(true);
  useLayoutEffect(() => {
    if (first.current) first.current = false;
    else heading.current?.focus();
  }, [step]);
  const focusResult = () =>
    requestAnimationFrame(() =>
      document.querySelector<HTMLElement>('[data-testid=test-result]')?.focus(),
    );

  const current = models.find((m) => m.slots.includes('default'));
  const lite = models.find((m) => m.slots.includes('lite'));

  const runTest = async (id: string): Promise<Result> => {
    try {
      return await api('POST', '/api/config/test', { body: { model_id: id } });
    } catch (err) {
      return { ok: false, reason: 'request_failed', message: describe(err) };
    }
  };

  const savedDefault = async (entry: ModelEntry) => {
    setTest(undefined);
    await api('PUT', '/api/config/models/default', { body: { model_id: entry.id } });
    setTest(await runTest(entry.id));
    await refresh();
    // The form is re-made for the saved entry: focus goes to the verdict, then on to Next.
    focusResult();
  };

  const savedLite = async (entry: ModelEntry) => {
    setLiteTest(undefined);
    await api('PUT', '/api/config/models/lite', { body: { model_id: entry.id } });
    setLiteTest(await runTest(entry.id));
    await refresh();
    focusResult();
  };

  const finish = async () => {
    setBusy(true);
    setError('');
    try {
      await api('POST', '/api/onboard/complete');
      onDone();
    } catch (err) {
      setError(describe(err));
      await refresh().catch(() => undefined);
    } finally {
      setBusy(false);
    }
  };

  const tested = status?.steps.model_tested === true;
  return (
    <main class="onboarding" id="main" tabIndex={-1} data-testid="onboarding">
      <header>
        <h1 class="page-title">Welcome to svc</h1>
        <p class="muted">
          A few steps and your agent is ready. Everything here can be changed later in Settings.
        </p>
        <ol class="stepper">
          {steps.map(([s, label], i) => (
            <li
              key={s}
              class={
                s === step ? 'current' : steps.findIndex(([x]) => x === step) > i ? 'done' : ''
              }
            >
              <button
                type="button"
                class="link"
                disabled={s !== 'model' && !tested}
                onClick={() => setStep(s)}
              >
                {i + 1}. {label}
              </button>
            </li>
          ))}
        </ol>
      </header>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!providers || !loaded ? (
        <p class="muted">Loading providers…</p>
      ) : step === 'model' ? (
        <section class="card">
          <h2 ref={heading} tabIndex={-1}>
            Your model
          </h2>
          <p class="muted">
            Choose who runs the model, which model, and the key. svc sends one tiny request to check
            that they work.
          </p>
          <ModelForm
            key={current?.id ?? 'new'}
            providers={providers}
            entry={current}
            submitLabel={current ? 'Save and test again' : 'Save and test'}
            onSaved={savedDefault}
            primary={!tested}
          />
          <TestResult
            result={
              test ??
              (status?.last_test && !status.last_test.ok
                ? { ok: false, reason: status.last_test.reason }
                : undefined)
            }
          />
          <div class="actions">
            <button
              type="button"
              class={tested ? 'primary' : undefined}
              disabled={!tested}
              onClick={() => setStep('lite')}
              data-testid="onboarding-next"
            >
              Next
            </button>
            <button type="button" class="link" onClick={onSkip}>
              Skip setup for now
            </button>
          </div>
        </section>
      ) : step === 'lite' ? (
        <section class="card">
          <h2 ref={heading} tabIndex={-1}>
            A lite model (optional)
          </h2>
          <p class="muted">
            A cheaper, faster model for small jobs such as titles and summaries. Without one, the
            default model does them.
          </p>
          {lite ? (
            <p>
              The lite slot holds <strong>{lite.id}</strong> ({lite.provider} · {lite.model}).
            </p>
          ) : (
            <ModelForm
              providers={providers}
              like={current}
              submitLabel="Save, use as lite and test"
              onSaved={savedLite}
            />
          )}
          <TestResult result={liteTest} />
          <div class="actions">
            <button
              type="button"
              class={lite ? 'primary' : undefined}
              onClick={() => setStep('profile')}
              data-testid="onboarding-next"
            >
              {lite ? 'Next' : 'Skip'}
            </button>
          </div>
        </section>
      ) : step === 'profile' ? (
        <section class="card">
          <h2 ref={heading} tabIndex={-1}>
            Profile (optional)
          </h2>
          <p class="muted">
            Two plain Markdown files the agent reads at the start of every chat. You can leave them
            empty.
          </p>
          <ProfileForm
            submitLabel="Save profile"
            onSaved={() => void refresh()}
            primary={!status?.steps.profile_written}
          />
          <div class="actions">
            <button
              type="button"
              class={status?.steps.profile_written ? 'primary' : undefined}
              onClick={() => setStep('service')}
              data-testid="onboarding-next"
            >
              {status?.steps.profile_written ? 'Next' : 'Skip'}
            </button>
          </div>
        </section>
      ) : step === 'service' || step === 'phone' || step === 'sandbox' ? (
        <section class="card stack">
          <h2 ref={heading} tabIndex={-1}>
            {step === 'service'
              ? 'Keep svc running (optional)'
              : step === 'phone'
                ? 'Use it from your phone (optional)'
                : 'The sandbox'}
          </h2>
          {!setup ? (
            <p class="loading">Loading…</p>
          ) : step === 'service' ? (
            <ServiceStep setup={setup} />
          ) : step === 'phone' ? (
            <PhoneStep setup={setup} />
          ) : (
            <SandboxStep setup={setup} onCheck={() => void loadSetup()} />
          )}
          <div class="actions">
            <button
              type="button"
              class="primary"
              onClick={() => setStep(after[step] ?? 'finish')}
              data-testid="onboarding-next"
            >
              Next
            </button>
          </div>
        </section>
      ) : (
        <section class="card">
          <h2 ref={heading} tabIndex={-1}>
            Ready
          </h2>
          <ul class="plain">
            <li>
              Default model:{' '}
              {current ? `${current.id} (${current.provider} · ${current.model})` : 'none'}
            </li>
            <li>Lite model: {lite ? `${lite.id} (${lite.provider} · ${lite.model})` : 'none'}</li>
            <li>Profile: {status?.steps.profile_written ? 'written' : 'not written'}</li>
            {setup && (
              <li>
                Sandbox:{' '}
                {setup.sandbox.state === 'on' ? 'on' : 'off (svc asks before more commands)'}
              </li>
            )}
          </ul>
          <div class="actions">
            <button
              type="button"
              class="primary"
              disabled={busy || !status?.can_complete}
              onClick={finish}
              data-testid="onboarding-finish"
            >
              Start chatting
            </button>
          </div>
          {!status?.can_complete && <p class="muted small">{status?.next}</p>}
        </section>
      )}
    </main>
  );
}
