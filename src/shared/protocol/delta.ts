import { z } from 'zod';

/**
 * The data of a streamed piece of text (`turn.text_delta`, `turn.reasoning_delta`): one schema
 * for the `/ws` catalogue and for the IPC event that carries it, so the IPC parse at each hop is
 * the catalogue's check too.
 */
export const deltaDataShape = {
  turn_id: z.string().min(1).max(64),
  delta: z.string(),
};
