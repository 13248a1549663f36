import { z } from 'zod';
import { writeFileAtomic } from '../../shared/atomic-write.js';
import { ApiError } from '../../shared/errors.js';
import { markOnboardingComplete, onboardingStatus } from '../../shared/onboarding.js';
import { MetaStore } from '../../shared/store/meta.js';
import type { Deps } from '../deps.js';
import { onboardCompletion, onboardStatus } from '../../shared/protocol/answers.js';
import { route, type Route } from '../route.js';

const PROFILE_MAX = 64 * 1024;
const profileText = z.string().max(PROFILE_MAX, `at most ${PROFILE_MAX} characters`);

/** First-run onboarding: status (and the optional profile step) and completion. */
export function onboardRoutes(deps: Deps): Route[] {
  const meta = new MetaStore(deps.db);
  const status = () => onboardingStatus(deps.config(), meta, deps.paths);
  const changed = () => {
    const s = status();
    deps.publish('server', 'onboard.updated', s);
    return s;
  };
  return [
    route({
      method: 'GET',
      path: '/api/onboard/status',
      summary:
        'Where first-run onboarding stands: no_model → model_configured → model_tested → profile_written → done.',
      response: onboardStatus,
      handler: () => ({ body: status() }),
    }),
    route({
      method: 'POST',
      path: '/api/onboard/status',
      summary:
        'The optional profile step: writes soul.md and/or user.md, then answers the onboarding status.',
      body: z.object({ soul: profileText.optional(), user: profileText.optional() }).strict(),
      response: onboardStatus,
      handler: ({ body }) => {
        if (body.soul !== undefined) writeFileAtomic(deps.paths.soul, body.soul);
        if (body.user !== undefined) writeFileAtomic(deps.paths.user, body.user);
        return { body: body.soul !== undefined || body.user !== undefined ? changed() : status() };
      },
    }),
    route({
      method: 'GET',
      path: '/api/onboard/complete',
      summary: 'Whether onboarding was completed, and when.',
      response: onboardCompletion,
      handler: () => {
        const s = status();
        return { body: { completed: s.steps.completed, completed_at: s.completed_at } };
      },
    }),
    route({
      method: 'POST',
      path: '/api/onboard/complete',
      summary:
        'Finishes onboarding; refused with 409 while no tested, working default model exists.',
      body: z.object({}).strict(),
      response: onboardStatus,
      errors: [409],
      handler: () => {
        const s = status();
        if (!s.can_complete)
          throw new ApiError('conflict', `Onboarding cannot finish yet: ${s.next}`);
        if (!s.steps.completed) markOnboardingComplete(meta);
        return { body: changed() };
      },
    }),
  ];
}
