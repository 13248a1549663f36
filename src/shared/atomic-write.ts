import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Writes a file whole or not at all: a private temp file beside it, fsynced, renamed over it. */
export function writeFileAtomic(file: string, text: string, mode = 0o600): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}
