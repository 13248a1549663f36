import type { ConfigError } from '../../shared/config/load.js';
import type { Config } from '../../shared/config/schema.js';
import type { Paths } from '../../shared/paths.js';

/** The checks behind `svc doctor`. A check that cannot decide says warn and why: never a false fail. */

export interface Check {
  id: string;
  status: 'ok' | 'warn' | 'fail';
  message: string;
  fix?: string;
  /** What `--fix` may do about it, safely and without asking. */
  repair?: () => string;
}

export interface Context {
  paths: Paths;
  /** The running supervisor's status as it sent it (fields this CLI does not know included), if one runs. */
  running: Record<string, unknown> | undefined;
  config: Config | ConfigError;
  modelTimeoutMs: number;
}

export const ok = (id: string, message: string): Check => ({ id, status: 'ok', message });
export const warn = (id: string, message: string, fix?: string): Check => ({
  id,
  status: 'warn',
  message,
  fix,
});
export const fail = (id: string, message: string, fix?: string): Check => ({
  id,
  status: 'fail',
  message,
  fix,
});
