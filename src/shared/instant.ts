import { z } from 'zod';

/** A time bound: a date (YYYY-MM-DD, midnight UTC) or an ISO date-time. */
export const instant = (name: string) =>
  z
    .string()
    .regex(
      /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/,
      `${name} must be a date (2026-11-01) or an ISO date-time (2026-11-01T12:00:00Z)`,
    )
    .transform((v, ctx) => {
      const t = Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v);
      if (Number.isNaN(t)) {
        ctx.addIssue({ code: 'custom', message: `${name} is not a real date` });
        return z.NEVER;
      }
      return new Date(t).toISOString();
    });
