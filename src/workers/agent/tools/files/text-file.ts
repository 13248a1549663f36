import { readFileSync, statSync } from 'node:fs';
import { sha256Of } from '../../../../shared/store/file-trash.js';
import { looksBinary } from './binary.js';

/** Larger files are refused by read_file, write_file and edit_file. */
export const MAX_TEXT_FILE_BYTES = 10 * 1024 * 1024;

export interface TextFile {
  buf: Buffer;
  sha256: string;
  size: number;
  mtimeMs: number;
  mode: number;
}

export type Loaded =
  | { ok: true; file: TextFile }
  | { ok: false; missing: boolean; message: string };

/** Reads a file the file tools may work on: it exists, is a regular file, is not huge and is text. */
export function loadTextFile(abs: string, shown: string): Loaded {
  let st;
  try {
    st = statSync(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return { ok: false, missing: true, message: `${shown} does not exist.` };
    return {
      ok: false,
      missing: false,
      message: `Cannot open ${shown}: ${(err as Error).message}`,
    };
  }
  if (st.isDirectory())
    return {
      ok: false,
      missing: false,
      message: `${shown} is a folder, not a file; use glob to list its files.`,
    };
  // FIFOs, sockets and devices could block forever or never end.
  if (!st.isFile())
    return {
      ok: false,
      missing: false,
      message: `${shown} is not a regular file (a device, pipe or socket); the file tools only handle regular files.`,
    };
  if (st.size > MAX_TEXT_FILE_BYTES) {
    return {
      ok: false,
      missing: false,
      message: `${shown} is ${formatBytes(st.size)}, over the ${formatBytes(MAX_TEXT_FILE_BYTES)} limit of the file tools; use grep to find what you need in it, or the terminal.`,
    };
  }
  const buf = readFileSync(abs);
  if (looksBinary(buf))
    return {
      ok: false,
      missing: false,
      message: `${shown} looks binary (NUL bytes or not UTF-8 text), so it is not shown.`,
    };
  return {
    ok: true,
    file: {
      buf,
      sha256: sha256Of(buf),
      size: buf.length,
      mtimeMs: st.mtimeMs,
      mode: st.mode & 0o7777,
    },
  };
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Lines as an editor counts them: a final newline does not start another line. */
export function countLines(text: string): number {
  if (text === '') return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n - 1 : n;
}
