import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { enforceToolOutputCap, safeName, toolOutputDir } from '../../../../shared/tool-output.js';
import { log } from '../../../../shared/log.js';

/** What a tool result may hold of a command's output, in characters. */
export const RESULT_CAP = 30_000;
const HEAD = 12_000;
const TAIL = 12_000;
/** The spill file stops growing here, so a runaway command cannot fill the disk. */
const FILE_CAP = 256 * 1024 * 1024;

/** All tool output files together stay under this (agent.tool_output_max_bytes; set by the worker from config). */
export const toolOutputCap = { bytes: 2 * 1024 * 1024 * 1024 };

/**
 * The file a call's full output goes to: $SVC_HOME/tool-output/<session>/<id>.log, private (it
 * goes with its session). Older outputs are removed first when the total is over the cap.
 */
export function outputFile(svcHome: string, sessionId: string, id: string): string {
  const dir = toolOutputDir(svcHome, sessionId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${safeName(id)}.log`);
  capOutputs(file);
  return file;
}

/** Keeps every output file but `file` (the one being written) under the cap, oldest removed first. */
function capOutputs(file: string): void {
  try {
    const r = enforceToolOutputCap(dirname(dirname(file)), toolOutputCap.bytes, file);
    if (r.removed > 0)
      log.info('removed the oldest tool output files to stay under agent.tool_output_max_bytes', {
        files: r.removed,
        freed_bytes: r.freed_bytes,
      });
  } catch (err) {
    log.warn('could not check the size of the tool output files', {
      error: (err as Error).message,
    });
  }
}

/**
 * A command's merged output. It keeps the first characters and a window of the latest ones in
 * memory; once the total outgrows the window, everything (from the start) also goes to a file,
 * so memory stays bounded however much a command prints.
 */
export class OutputLog {
  total = 0;
  private head = '';
  private window = '';
  private windowStart = 0;
  private fd: number | undefined;
  private fileBytes = 0;
  private spillTried = false;
  fileTruncated = false;
  file: string | undefined;

  constructor(
    private readonly spillTo: () => string,
    private readonly keep = RESULT_CAP,
  ) {}

  append(chunk: string): void {
    if (chunk.length === 0) return;
    if (this.head.length < HEAD) this.head += chunk.slice(0, HEAD - this.head.length);
    if (!this.spillTried && this.total + chunk.length > this.keep) this.openSpill();
    this.writeSpill(chunk);
    this.total += chunk.length;
    this.window += chunk;
    if (this.window.length > this.keep) {
      const drop = this.window.length - this.keep;
      this.window = this.window.slice(drop);
      this.windowStart += drop;
    }
  }

  /** Everything, when it all fits in the window. */
  get complete(): boolean {
    return this.windowStart === 0 && this.file === undefined;
  }

  /** The text for a tool result: all of it, or head + tail + where the rest is. */
  summary(): string {
    if (this.complete) return this.window;
    const tail = this.window.slice(-TAIL);
    const skipped = this.total - this.head.length - tail.length;
    const where = this.file
      ? ` The full output (${this.total} characters${this.fileTruncated ? `, cut at ${FILE_CAP} bytes` : ''}) is in ${this.file}; read parts of it with read_file or grep.`
      : '';
    return `${this.head}\n\n[… ${skipped} characters omitted.${where} …]\n\n${tail}`;
  }

  /** Up to `max` characters from `offset` on, for paging through a background command's output. */
  read(offset: number, max = RESULT_CAP): { text: string; from: number; next: number } {
    const from = Math.min(Math.max(offset, this.windowStart), this.total);
    const text = this.window.slice(from - this.windowStart, from - this.windowStart + max);
    return { text, from, next: from + text.length };
  }

  /** Where the in-memory window starts: output before it is only in the file. */
  get earliest(): number {
    return this.windowStart;
  }

  close(): void {
    if (this.fd !== undefined) {
      closeSync(this.fd);
      // Its size is known now: the others make room for it.
      if (this.file) capOutputs(this.file);
    }
    this.fd = undefined;
  }

  private openSpill(): void {
    this.spillTried = true;
    try {
      this.file = this.spillTo();
      this.fd = openSync(this.file, 'w', 0o600);
      // Nothing has left the window yet, so the window is everything so far.
      this.writeSpill(this.window);
    } catch {
      this.fd = undefined;
      this.file = undefined;
    }
  }

  private writeSpill(text: string): void {
    if (this.fd === undefined || this.fileTruncated) return;
    const buf = Buffer.from(text, 'utf8');
    const room = FILE_CAP - this.fileBytes;
    const part = buf.length > room ? buf.subarray(0, room) : buf;
    writeSync(this.fd, part);
    this.fileBytes += part.length;
    if (part.length < buf.length) this.fileTruncated = true;
  }
}
