/** The permission engine: what a tool call may do, from hard limits, the user's rules and defaults. */
export { applyMode, evaluate, insistOnAsk, type Decision, type EvalEnv, type EvalInput, type PermissionMode } from './engine.js';
export { emptyRules, loadRules, parseRules, type Rule, type RuleSet, type Verdict } from './rules.js';
export { ALWAYS_ASK, builtinRules, fallbackVerdict, WRITE_TOOLS } from './defaults.js';
export { hardDenyCommand, hardDenyWrite, isSystemWrite, type HardDeny } from './hard-deny.js';
export { loadShellParser, shellParserReady } from './parser.js';
export { parseShell, type ParsedLine, type SimpleCommand } from './shell.js';
