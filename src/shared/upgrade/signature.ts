import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../version.js';
import { UpgradeError } from './fetch.js';

/*
 * The optional signature, beyond the checksums: a release may carry checksums.txt.sig, an Ed25519
 * signature of checksums.txt (base64), checked with node:crypto against release-key.pem in the
 * installed version (SVC_RELEASE_KEY_FILE names another, for a self-built line of releases). A bad
 * signature refuses the upgrade; a release without one, or an install without a key, is checked
 * by checksums.txt over TLS alone, as before.
 */

export function releaseKeyFile(): string {
  return process.env.SVC_RELEASE_KEY_FILE && process.env.SVC_RELEASE_KEY_FILE !== ''
    ? process.env.SVC_RELEASE_KEY_FILE
    : join(packageRoot, 'release-key.pem');
}

/** 'verified', or 'unchecked' when there is nothing to check with; throws when the signature is bad. */
export function checkSignature(
  checksums: string,
  signature: string | undefined,
): 'verified' | 'unchecked' {
  const keyFile = releaseKeyFile();
  if (signature === undefined || !existsSync(keyFile)) return 'unchecked';
  const sig = Buffer.from(signature.trim(), 'base64');
  let ok = false;
  try {
    ok =
      sig.length === 64 &&
      verify(null, Buffer.from(checksums, 'utf8'), createPublicKey(readFileSync(keyFile)), sig);
  } catch (err) {
    throw new UpgradeError(
      `checksums.txt.sig could not be checked against ${keyFile} (${(err as Error).message}); refused, nothing was changed`,
    );
  }
  if (!ok)
    throw new UpgradeError(
      `checksums.txt.sig is not a valid signature of checksums.txt by the key in ${keyFile}; refused, nothing was changed`,
    );
  return 'verified';
}

/** The release build's side: the base64 signature of checksums.txt with a PEM Ed25519 private key. */
export function signChecksums(checksums: string, privateKeyPem: string): string {
  return (
    sign(null, Buffer.from(checksums, 'utf8'), createPrivateKey(privateKeyPem)).toString('base64') +
    '\n'
  );
}
