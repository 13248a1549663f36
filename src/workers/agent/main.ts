import { startChild } from '../../shared/child.js';

/**
 * An agent worker. Turns arrive here in a later issue; for now it takes part in the IPC protocol
 * (start, stats, echo) so the supervisor's routing between children is real end to end.
 */
const inflightTurns = 0;
const endpoint = startChild('agent', () => inflightTurns);
endpoint.handle('child.start', () => ({}));
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => {});
