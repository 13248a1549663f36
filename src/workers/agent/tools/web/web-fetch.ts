import { z } from 'zod';
import { defineTool, type Tool } from '../registry.js';
import { fetchUrl, type FetchOptions } from './web-fetch-core.js';

/** Settings a test may change; the model only ever gets the defaults. */
export type WebFetchInternals = Pick<
  FetchOptions,
  'allowLoopback' | 'resolve' | 'timeoutMs' | 'maxBytes' | 'maxRedirects'
>;

export function makeWebFetchTool(internals: WebFetchInternals = {}): Tool {
  return defineTool({
    name: 'web_fetch',
    purpose:
      'Reads a public web page and gives the agent its text. Pages on this machine or a private network are refused.',
    description:
      'Fetches an http(s) URL and returns its content as text: HTML is turned into readable text (headings, paragraphs, ' +
      'lists, links as `text (url)`), JSON and plain text come back as they are, other types as a short note. ' +
      'Follows up to 5 redirects; 20 s and 5 MiB limits. Local and private network addresses are refused.',
    args: z
      .object({
        url: z.string().min(1).max(8192).describe('The http or https URL'),
        max_chars: z
          .number()
          .int()
          .min(100)
          .max(200_000)
          .optional()
          .describe('Most characters of text to return (default 20000)'),
      })
      .strict(),
    subject: (args) => ({ url: args.url }),
    run: async ({ url, max_chars }, ctx) => {
      const r = await fetchUrl(url, {
        ...internals,
        maxChars: max_chars ?? 20_000,
        signal: ctx.signal,
      });
      return { output: r.output, ...(r.isError ? { isError: true } : {}) };
    },
  });
}

export const webFetchTool = makeWebFetchTool();
