import type { Socket } from 'node:net';

/**
 * The SOCKS5 handshake (RFC 1928) as far as the egress proxy speaks it: no authentication, the
 * CONNECT command, IPv4, domain-name and IPv6 targets. Reads from a socket until the request is
 * complete, then hands back the target and whatever the client sent after it.
 */

export const REP = {
  ok: 0,
  failure: 1,
  notAllowed: 2,
  networkUnreachable: 3,
  hostUnreachable: 4,
  refused: 5,
  commandNotSupported: 7,
  addressNotSupported: 8,
} as const;

/** A reply with an all-zero bound address (clients do not use it for CONNECT). */
export function reply(code: number): Buffer {
  return Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
}

export type Request =
  | { ok: true; host: string; port: number; rest: Buffer }
  | { ok: false; code: number };

/** Parses a complete greeting + request from `buf`, or says how it fails; undefined: need more. */
export function parse(
  buf: Buffer,
): { greeting: 'no_auth' | 'refused'; request?: Request } | undefined {
  if (buf.length < 2) return undefined;
  if (buf[0] !== 5) return { greeting: 'refused' };
  const n = buf[1]!;
  if (buf.length < 2 + n) return undefined;
  const methods = buf.subarray(2, 2 + n);
  if (!methods.includes(0)) return { greeting: 'refused' };
  const req = buf.subarray(2 + n);
  if (req.length < 5) return { greeting: 'no_auth' };
  if (req[0] !== 5) return { greeting: 'no_auth', request: { ok: false, code: REP.failure } };
  const atyp = req[3];
  let host: string;
  let at: number;
  if (atyp === 1) {
    if (req.length < 10) return { greeting: 'no_auth' };
    host = [...req.subarray(4, 8)].join('.');
    at = 8;
  } else if (atyp === 3) {
    const len = req[4]!;
    if (req.length < 5 + len + 2) return { greeting: 'no_auth' };
    host = req.subarray(5, 5 + len).toString('latin1');
    at = 5 + len;
  } else if (atyp === 4) {
    if (req.length < 22) return { greeting: 'no_auth' };
    const words: string[] = [];
    for (let i = 0; i < 8; i++) words.push(req.readUInt16BE(4 + i * 2).toString(16));
    host = words.join(':');
    at = 20;
  } else return { greeting: 'no_auth', request: { ok: false, code: REP.addressNotSupported } };
  if (req[1] !== 1)
    return { greeting: 'no_auth', request: { ok: false, code: REP.commandNotSupported } };
  const port = req.readUInt16BE(at);
  return { greeting: 'no_auth', request: { ok: true, host, port, rest: req.subarray(at + 2) } };
}

/**
 * Runs the handshake on `socket`: answers the greeting, then calls `onRequest` with the target
 * once it is complete. A client that speaks something else is answered as SOCKS5 says and closed.
 */
export function handshake(socket: Socket, onRequest: (r: Request) => void): void {
  let buf = Buffer.alloc(0);
  let greeted = false;
  const onData = (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    if (buf.length > 600) return done({ ok: false, code: REP.failure });
    const p = parse(buf);
    if (!p) return;
    if (p.greeting === 'refused') {
      socket.end(Buffer.from([5, 0xff]));
      return stop();
    }
    if (!greeted) {
      greeted = true;
      socket.write(Buffer.from([5, 0]));
    }
    if (p.request) done(p.request);
  };
  const stop = () => socket.off('data', onData);
  const done = (r: Request) => {
    stop();
    if (!r.ok) socket.end(reply(r.code));
    else onRequest(r);
  };
  socket.on('data', onData);
}
