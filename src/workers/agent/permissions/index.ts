/** The permission engine: what a tool call may do, from hard limits, the user's rules and defaults. */
export {
  applyMode,
  evaluate,
  insistOnAsk,
  RANK,
  type Decision,
  type EvalEnv,
  type EvalInput,
} from './engine.js';
export { emptyRules, loadRules, parseRules, type RuleSet } from './rules.js';
export { loadShellParser } from './parser.js';
export { parseShell } from './shell.js';
