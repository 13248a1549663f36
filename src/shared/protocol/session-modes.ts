/** A session's reasoning effort and permission mode: node-free, for the store and the answers. */
export const reasoningEfforts = ['off', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
export const permissionModes = ['interactive', 'auto', 'strict'] as const;
