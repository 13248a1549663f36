import { closeSync, fstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { rotateLogFile } from '../shared/log-files.js';
import { addLogSink, logConsoleOn, scrub } from '../shared/log.js';

export interface LogLimits {
  file_bytes: number;
  files: number;
}

/** One process's live log file, rotated when the next line would pass the size limit. */
class RotatingFile {
  private fd: number | undefined;
  private size = 0;

  constructor(
    private readonly file: string,
    private readonly limits: () => LogLimits,
  ) {}

  write(line: string): void {
    const bytes = Buffer.from(line + '\n');
    try {
      if (this.fd === undefined) this.open();
      if (this.size > 0 && this.size + bytes.length > this.limits().file_bytes) {
        closeSync(this.fd!);
        this.fd = undefined;
        rotateLogFile(this.file, this.limits().files);
        this.open();
      }
      this.size += writeSync(this.fd!, bytes);
    } catch {
      // a full disk or a removed folder must not take the server down; stderr still has the line
      this.close();
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private open(): void {
    this.fd = openSync(this.file, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }
}

/**
 * The supervisor alone writes the log files: its own lines and, line by line, the stderr of every
 * child (one writer per file, so rotation never races). Children's lines also go on to this
 * process's stderr unless it runs as a daemon, whose stderr is logs/serve.log.
 */
export class LogSink {
  private readonly files = new Map<string, RotatingFile>();

  constructor(
    private readonly dir: string,
    private limits: LogLimits,
    private readonly echo: boolean,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    addLogSink((line) => this.write('supervisor', line));
  }

  setLimits(limits: LogLimits): void {
    this.limits = limits;
  }

  /** Copies a child's stderr into `<role>.log`, whole lines only. */
  follow(role: string, stream: Readable | null): void {
    if (!stream) return;
    let buf = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        this.childLine(role, buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
      if (buf.length > 64 * 1024) {
        this.childLine(role, buf);
        buf = '';
      }
    });
    stream.on('end', () => {
      if (buf !== '') this.childLine(role, buf);
      buf = '';
    });
    stream.on('error', () => {});
  }

  close(): void {
    for (const f of this.files.values()) f.close();
  }

  private childLine(role: string, raw: string): void {
    const line = scrub(raw); // children scrub their own lines; a crash trace has not been
    if (this.echo && logConsoleOn()) process.stderr.write(line + '\n');
    this.write(role, line);
  }

  private write(name: string, line: string): void {
    let file = this.files.get(name);
    if (!file) {
      file = new RotatingFile(join(this.dir, `${name}.log`), () => this.limits);
      this.files.set(name, file);
    }
    file.write(line);
  }
}
