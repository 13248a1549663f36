import { z } from 'zod';

/**
 * The OpenAPI requestBody of a route whose handler validates its body itself (a stream, or a
 * body checked after merging with what is saved), from the zod schemas it validates with: the
 * document then says what the route takes even though `body` cannot.
 */
export function requestBodyDoc(
  content: Record<string, z.ZodType | Record<string, unknown>>,
  required: boolean,
): Record<string, unknown> {
  return {
    required,
    content: Object.fromEntries(
      Object.entries(content).map(([type, s]) => [
        type,
        { schema: s instanceof z.ZodType ? jsonSchemaOf(s) : s },
      ]),
    ),
  };
}

function jsonSchemaOf(schema: z.ZodType): unknown {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
}

/** A file part of a multipart/form-data body, for its schema. */
export const binaryPart = (description: string) => ({
  type: 'string',
  contentMediaType: 'application/octet-stream',
  description,
});
