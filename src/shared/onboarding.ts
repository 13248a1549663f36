import { createHash } from 'node:crypto';
import { onboardingStates } from './protocol/events.js';
import { existsSync } from 'node:fs';
import { z } from 'zod';
import type { Config, ModelEntry } from './config/schema.js';
import type { Paths } from './paths.js';
import type { MetaStore } from './store/meta.js';
import { own } from './own.js';

/**
 * First-run onboarding, as a small state machine derived from what exists:
 *
 *   no_model ──(default slot set)──▶ model_configured ──(test passes)──▶ model_tested
 *        ──(soul.md or user.md written)──▶ profile_written ──(complete)──▶ done
 *
 * The profile step is optional: `complete` is allowed from model_tested or profile_written.
 * Changing the default model's provider, model, address or key invalidates an earlier test.
 */
export { onboardingStates };
export type OnboardingState = (typeof onboardingStates)[number];

const modelTest = z.object({
  fingerprint: z.string(),
  ok: z.boolean(),
  at: z.string(),
  reason: z.string().optional(),
});

const TEST_KEY = 'onboard.model_test';
const DONE_KEY = 'onboard.completed_at';

export function modelFingerprint(entry: ModelEntry): string {
  return createHash('sha256')
    .update(
      JSON.stringify([entry.provider, entry.model, entry.base_url ?? '', entry.api_key ?? '']),
    )
    .digest('hex');
}

export function recordModelTest(
  meta: MetaStore,
  entry: ModelEntry,
  ok: boolean,
  reason?: string,
): void {
  meta.set(
    TEST_KEY,
    JSON.stringify({
      fingerprint: modelFingerprint(entry),
      ok,
      at: new Date().toISOString(),
      reason,
    }),
  );
}

export function markOnboardingComplete(meta: MetaStore): string {
  const at = new Date().toISOString();
  meta.set(DONE_KEY, at);
  return at;
}

export interface OnboardingStatus {
  state: OnboardingState;
  steps: {
    model_configured: boolean;
    model_tested: boolean;
    profile_written: boolean;
    completed: boolean;
  };
  default_model: string | null;
  last_test: { ok: boolean; at: string; reason?: string } | null;
  completed_at: string | null;
  can_complete: boolean;
  next: string;
}

export function onboardingStatus(config: Config, meta: MetaStore, paths: Paths): OnboardingStatus {
  const id = config.slots.default ?? null;
  const entry = id ? own(config.models, id) : undefined;
  const parsed = modelTest.safeParse(safeJson(meta.get(TEST_KEY)));
  const test =
    parsed.success && entry && parsed.data.fingerprint === modelFingerprint(entry)
      ? parsed.data
      : null;
  const steps = {
    model_configured: entry !== undefined,
    model_tested: test?.ok === true,
    profile_written: existsSync(paths.soul) || existsSync(paths.user),
    completed: meta.get(DONE_KEY) !== undefined,
  };
  const state: OnboardingState = steps.completed
    ? 'done'
    : !steps.model_configured
      ? 'no_model'
      : !steps.model_tested
        ? 'model_configured'
        : steps.profile_written
          ? 'profile_written'
          : 'model_tested';
  const next: Record<OnboardingState, string> = {
    no_model:
      'Add a model entry (POST /api/config/models) and put it in the default slot (PUT /api/config/models/default).',
    model_configured:
      test && !test.ok
        ? `The last test failed (${test.reason ?? 'unknown reason'}); fix the entry and test again (POST /api/config/test).`
        : 'Test the default model (POST /api/config/test).',
    model_tested:
      'Optionally write soul.md and user.md (POST /api/onboard/status), then finish (POST /api/onboard/complete).',
    profile_written: 'Finish (POST /api/onboard/complete).',
    done: 'Onboarding is complete.',
  };
  return {
    state,
    steps,
    default_model: id,
    last_test: test
      ? { ok: test.ok, at: test.at, ...(test.reason ? { reason: test.reason } : {}) }
      : null,
    completed_at: meta.get(DONE_KEY) ?? null,
    can_complete: steps.completed || steps.model_tested,
    next: next[state],
  };
}

function safeJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
