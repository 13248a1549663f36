import { z } from 'zod';

/** The answers of /api/upload (src/gateway/routes/uploads.ts). zod and node-free, like answers.ts. */

/** A file uploaded with POST /api/upload, as the store keeps it; `name` is its file name in $SVC_HOME/uploads/. */
export const uploadRowSchema = z.lazy(() =>
  z.object({
    name: z.string(),
    /** The client's file name after sanitising (no path, no control characters). */
    original_name: z.string(),
    mime: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    created_at: z.string(),
  }),
);

/** What POST /api/upload stored: each file's name (what other routes take) and where to fetch it. */
export const uploadedFiles = z.lazy(() =>
  z.object({
    files: z.array(
      uploadRowSchema
        .unwrap()
        .omit({ created_at: true })
        .extend({ url: z.string().describe('GET it: /api/uploads/{name}') }),
    ),
  }),
);
