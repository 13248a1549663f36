/**
 * The seccomp program bubblewrap loads (`--seccomp FD`) for every sandboxed command on Linux:
 * classic BPF, emitted here as the bytes of `struct sock_filter[]`, so no libseccomp is needed.
 *
 * It refuses `socket(AF_UNIX, …)` with EPERM, so nothing inside can connect to a unix socket that
 * lives outside (an ssh-agent, the D-Bus session bus, a Docker socket, a tmux server) whatever
 * the filesystem shows; `socketpair` stays allowed (it reaches nothing). `io_uring_setup` fails
 * with ENOSYS, because io_uring can create and connect sockets without the `socket` system call
 * (programs then fall back to ordinary calls). A system call from another ABI (i386 through
 * `int 0x80`, x32 on x86_64), whose numbers this program does not check, kills the process.
 */

/** seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]. */
const OFF_NR = 0;
const OFF_ARCH = 4;
/** The low 32 bits of args[0] (both supported machines are little-endian). */
const OFF_ARG0 = 16;

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;

export const RET_ALLOW = 0x7fff0000;
export const RET_KILL_PROCESS = 0x80000000;
export const RET_ERRNO = 0x00050000;
export const EPERM = 1;
export const ENOSYS = 38;
export const AF_UNIX = 1;
const X32_SYSCALL_BIT = 0x40000000;

export interface SeccompArch {
  name: 'x64' | 'arm64';
  /** AUDIT_ARCH_* as seccomp_data.arch carries it. */
  audit: number;
  socket: number;
  ioUringSetup: number;
  /** x86_64 also accepts x32 system calls (numbers with bit 30 set). */
  x32: boolean;
}

export const ARCHES: Record<'x64' | 'arm64', SeccompArch> = {
  x64: { name: 'x64', audit: 0xc000003e, socket: 41, ioUringSetup: 425, x32: true },
  arm64: { name: 'arm64', audit: 0xc00000b7, socket: 198, ioUringSetup: 425, x32: false },
};

export interface Insn {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/**
 * The program for `arch`, as instructions (see `encode` for the bytes). `allowUnix` leaves
 * `socket(AF_UNIX)` alone: for a person who listed sockets to keep (sandbox.sockets), since a
 * program must create a unix socket to connect to one.
 */
export function program(arch: SeccompArch, allowUnix = false): Insn[] {
  const ld = (off: number): Insn => ({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: off });
  const ret = (k: number): Insn => ({ code: BPF_RET_K, jt: 0, jf: 0, k });
  // Jumps are relative to the next instruction; the tail below is laid out as:
  //   allow, kill, errno(EPERM), errno(ENOSYS)
  const body: Array<Insn | ((at: number, tail: number) => Insn)> = [
    ld(OFF_ARCH),
    (at, tail) => ({ code: BPF_JEQ_K, jt: 0, jf: tail + 1 - at - 1, k: arch.audit }),
    ld(OFF_NR),
    ...(arch.x32
      ? [
          (at: number, tail: number) => ({
            code: BPF_JGE_K,
            jt: tail + 1 - at - 1,
            jf: 0,
            k: X32_SYSCALL_BIT,
          }),
        ]
      : []),
    (at, tail) => ({ code: BPF_JEQ_K, jt: tail + 3 - at - 1, jf: 0, k: arch.ioUringSetup }),
    ...(allowUnix
      ? []
      : [
          (at: number, tail: number) => ({
            code: BPF_JEQ_K,
            jt: 0,
            jf: tail - at - 1,
            k: arch.socket,
          }),
          ld(OFF_ARG0),
          (at: number, tail: number) => ({
            code: BPF_JEQ_K,
            jt: tail + 2 - at - 1,
            jf: tail - at - 1,
            k: AF_UNIX,
          }),
        ]),
  ];
  const tail = body.length;
  const out = body.map((b, at) => (typeof b === 'function' ? b(at, tail) : b));
  out.push(ret(RET_ALLOW), ret(RET_KILL_PROCESS), ret(RET_ERRNO | EPERM), ret(RET_ERRNO | ENOSYS));
  return out;
}

/** struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }, little-endian. */
export function encode(insns: readonly Insn[]): Buffer {
  const buf = Buffer.alloc(insns.length * 8);
  insns.forEach((i, n) => {
    buf.writeUInt16LE(i.code, n * 8);
    buf.writeUInt8(i.jt, n * 8 + 2);
    buf.writeUInt8(i.jf, n * 8 + 3);
    buf.writeUInt32LE(i.k >>> 0, n * 8 + 4);
  });
  return buf;
}

/** This machine's program, or undefined where none is written (then the caller refuses to run). */
export function seccompProgram(
  allowUnix: boolean,
  machine: string = process.arch,
): Buffer | undefined {
  const arch = machine === 'x64' || machine === 'arm64' ? ARCHES[machine] : undefined;
  return arch ? encode(program(arch, allowUnix)) : undefined;
}

/**
 * Runs the program on one system call, as the kernel would: for tests, which check its decisions
 * without trusting the emitter.
 */
export function evaluate(
  bytes: Buffer,
  call: { arch: number; nr: number; args?: readonly number[] },
): number {
  const word = (off: number): number => {
    if (off === OFF_NR) return call.nr >>> 0;
    if (off === OFF_ARCH) return call.arch >>> 0;
    if (off >= 16 && off < 64 && off % 8 === 0) return (call.args?.[(off - 16) / 8] ?? 0) >>> 0;
    if (off >= 16 && off < 64 && off % 8 === 4) return 0;
    throw new Error(`load from offset ${off}`);
  };
  let acc = 0;
  let pc = 0;
  const n = bytes.length / 8;
  for (let steps = 0; steps <= n; steps++) {
    if (pc >= n) throw new Error('ran off the end of the program');
    const code = bytes.readUInt16LE(pc * 8);
    const jt = bytes.readUInt8(pc * 8 + 2);
    const jf = bytes.readUInt8(pc * 8 + 3);
    const k = bytes.readUInt32LE(pc * 8 + 4);
    if (code === BPF_RET_K) return k;
    if (code === BPF_LD_W_ABS) {
      acc = word(k);
      pc++;
    } else if (code === BPF_JEQ_K) pc += 1 + (acc === k ? jt : jf);
    else if (code === BPF_JGE_K) pc += 1 + (acc >= k ? jt : jf);
    else throw new Error(`unknown instruction ${code}`);
  }
  throw new Error('the program does not end');
}
