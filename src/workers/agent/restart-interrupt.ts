/** The abort reason of a turn stopped because svc restarts past restart.drain_seconds (not by the user). */
export class RestartInterrupt extends Error {
  constructor() {
    super(
      'svc restarted before this turn finished (it ran past restart.drain_seconds); the reply so far is kept',
    );
  }
}
