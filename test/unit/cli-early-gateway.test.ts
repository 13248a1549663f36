import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { forkGatewayEarly, takeEarlyGateway } from '../../src/cli/early-gateway.js';
import { codeRoot } from '../../src/shared/code-root.js';
import { removeHome, tmpHome } from '../helpers/server.js';

const svc = (...args: string[]) => ['/usr/bin/node', '/opt/svc/bin/svc.js', ...args];

test('only a foreground `svc serve` forks its gateway before svc loads', () => {
  const home = tmpHome();
  const before = process.env.SVC_HOME;
  process.env.SVC_HOME = home;
  try {
    for (const argv of [
      svc('serve', '-d'),
      svc('serve', '--daemon'),
      svc('serve', '--stop'),
      svc('serve', '-help'),
      svc('serve', '--version'),
      svc('status'),
      svc(),
    ]) {
      forkGatewayEarly(argv);
      const forked = takeEarlyGateway();
      forked?.proc.kill('SIGKILL');
      assert.is(forked, undefined, argv.slice(2).join(' '));
    }

    forkGatewayEarly(svc('serve', '-addr', '127.0.0.1:0'));
    const forked = takeEarlyGateway();
    assert.ok(forked, 'svc serve forks its gateway');
    try {
      const pid = forked.proc.pid!;
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      assert.ok(env.includes('SVC_ROLE=gateway'), 'a gateway');
      assert.ok(env.includes(`SVC_HOME=${home}`), 'of this home');
      assert.match(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), join(codeRoot, 'gateway'));
      assert.is(takeEarlyGateway(), undefined, 'taken once');
    } finally {
      forked.proc.kill('SIGKILL');
    }
  } finally {
    if (before === undefined) delete process.env.SVC_HOME;
    else process.env.SVC_HOME = before;
    removeHome(home);
  }
});

test.run();
