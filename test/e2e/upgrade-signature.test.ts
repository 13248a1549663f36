import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startReleaseServer, type ReleaseServer } from '../fixtures/release-server.js';
import { removeHome, runCli, tmpHome } from '../helpers/server.js';
import { sha256File } from '../../src/shared/upgrade/release-files.js';
import { signChecksums } from '../../src/shared/upgrade/signature.js';

/*
 * The optional Ed25519 signature of checksums.txt (checksums.txt.sig), through the real CLI and a
 * local HTTPS release host: a signature by another key refuses the upgrade with nothing changed;
 * one by the installed version's key (SVC_RELEASE_KEY_FILE here) lets it through.
 */

const version = '7.7.7';
const name = `svc-${version}-${process.platform}-${process.arch}-node${process.versions.node.split('.')[0]}.tar.gz`;
let host: ReleaseServer;
let dir: string;
let sums: string;

const pem = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    priv: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    pub: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
};
const ours = pem();
const theirs = pem();

test.before(async () => {
  host = await startReleaseServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-upgrade-sig-'));
  const stem = name.replace(/\.tar\.gz$/, '');
  mkdirSync(join(dir, 'src', stem, 'dist', 'src', 'cli'), { recursive: true });
  writeFileSync(
    join(dir, 'src', stem, 'package.json'),
    JSON.stringify({ name: 'svc', version, type: 'module' }),
  );
  writeFileSync(
    join(dir, 'src', stem, 'dist', 'src', 'cli', 'main.js'),
    'console.log("svc 7.7.7");\n',
  );
  execFileSync('tar', ['-czf', join(dir, name), '-C', join(dir, 'src'), stem]);
  sums = `${await sha256File(join(dir, name))}  ${name}\n`;
  writeFileSync(join(dir, 'ours.pub'), ours.pub);
});

test.after(async () => {
  await host.close();
  rmSync(dir, { recursive: true, force: true });
});

function release(sig: string): void {
  host.latest = {
    tag: `v${version}`,
    body: 'signed',
    assets: [
      { name, file: join(dir, name) },
      { name: 'checksums.txt', text: sums },
      { name: 'checksums.txt.sig', text: sig },
    ],
  };
}

const env = (home: string) => ({
  SVC_HOME: home,
  SVC_RELEASES_URL: host.base,
  NODE_EXTRA_CA_CERTS: host.caFile,
  SVC_RELEASE_KEY_FILE: join(dir, 'ours.pub'),
});

test('a checksums.txt signed by another key is refused with nothing changed', async () => {
  const home = tmpHome('svc-upgrade-sig-');
  try {
    release(signChecksums(sums, theirs.priv));
    const r = await runCli(['upgrade', '--yes'], env(home), 60_000);
    assert.is(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, 'checksums.txt.sig is not a valid signature of checksums.txt');
    assert.ok(
      !existsSync(join(home, 'versions')) || readdirSync(join(home, 'versions')).length === 0,
      'nothing installed',
    );
  } finally {
    removeHome(home);
  }
});

test("a checksums.txt signed by the installed version's key is installed", async () => {
  const home = tmpHome('svc-upgrade-sig-');
  try {
    release(signChecksums(sums, ours.priv));
    const r = await runCli(['upgrade', '--yes'], env(home), 60_000);
    assert.is(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, "checksums.txt is signed by this version's release key");
    assert.match(r.stdout, `svc ${version} starts with the next "svc serve"`);
    assert.is(
      realpathSync(join(home, 'versions', 'current')),
      join(realpathSync(home), 'versions', version),
    );
    assert.is(
      JSON.parse(readFileSync(join(home, 'versions', 'current', 'package.json'), 'utf8')).version,
      version,
    );
  } finally {
    removeHome(home);
  }
});

test.run();
