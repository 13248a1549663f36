import { readOptions, type OptSpec } from './options.js';
import { readSed, sedScripts } from './runners.js';
import type { SimpleCommand } from './shell.js';

/**
 * Where a command writes, by what the program does with its operands: cp/mv/install/ln/rsync
 * write their destination, sed -i and perl -i their files, truncate/touch/mkdir/shred/rm/chmod
 * every operand, tar -x and unzip -d into a folder, sed's `w` into a file. hard-deny.ts refuses
 * any of these inside a system folder or onto a disk, as it does a redirection.
 */

interface Plan {
  spec: OptSpec;
  /** Which operands are written: the last one (a destination), all of them, or all but the first (chmod's mode). */
  take: 'last' | 'all' | 'rest';
  /** Options whose value is a written folder or file. */
  into?: string[];
}

const PLANS: Record<string, Plan> = {
  cp: {
    spec: { shortValue: 'tS', longValue: ['target-directory', 'suffix', 'backup'] },
    take: 'last',
    into: ['t', 'target-directory'],
  },
  mv: {
    spec: { shortValue: 'tS', longValue: ['target-directory', 'suffix', 'backup'] },
    take: 'last',
    into: ['t', 'target-directory'],
  },
  install: {
    spec: {
      shortValue: 'tSmogM',
      longValue: ['target-directory', 'suffix', 'mode', 'owner', 'group'],
    },
    take: 'last',
    into: ['t', 'target-directory'],
  },
  ln: {
    spec: { shortValue: 'tS', longValue: ['target-directory', 'suffix', 'backup'] },
    take: 'last',
    into: ['t', 'target-directory'],
  },
  rsync: {
    spec: {
      shortValue: 'eBfT',
      longValue: ['rsh', 'exclude', 'include', 'filter', 'temp-dir', 'partial-dir', 'rsync-path'],
    },
    take: 'last',
  },
  truncate: { spec: { shortValue: 'sr', longValue: ['size', 'reference'] }, take: 'all' },
  touch: { spec: { shortValue: 'drt', longValue: ['date', 'reference'] }, take: 'all' },
  mkdir: { spec: { shortValue: 'mZ', longValue: ['mode', 'context'] }, take: 'all' },
  rmdir: { spec: {}, take: 'all' },
  rm: { spec: {}, take: 'all' },
  unlink: { spec: {}, take: 'all' },
  shred: {
    spec: { shortValue: 'ns', longValue: ['iterations', 'size', 'random-source'] },
    take: 'all',
  },
  fallocate: { spec: { shortValue: 'lo', longValue: ['length', 'offset'] }, take: 'all' },
  chmod: { spec: { longValue: ['reference'] }, take: 'rest' },
  chown: { spec: { longValue: ['reference', 'from'] }, take: 'rest' },
  chgrp: { spec: { longValue: ['reference'] }, take: 'rest' },
  chattr: { spec: {}, take: 'rest' },
  mkfifo: { spec: { shortValue: 'mZ' }, take: 'all' },
  patch: {
    spec: { shortValue: 'opiBdDFrVxYz', longValue: ['output', 'input', 'directory'] },
    take: 'all',
    into: ['o', 'output'],
  },
  unzip: { spec: { shortValue: 'dxP' }, take: 'last', into: ['d'] },
};

function operands(cmd: SimpleCommand, spec: OptSpec) {
  return readOptions(
    cmd.args,
    cmd.args.map((_a, k) => cmd.dynamic[cmd.start + 1 + k] ?? false),
    spec,
  );
}

/** An archive unpacked into / writes into its system folders (its members are /etc/…, /usr/…). */
const intoRoot = (dir: string): string => (/^\/+\.?\/*$/.test(dir) ? '/etc' : dir);

/** The paths a command writes by its operands or options (not its redirections); dynamic ones left out. */
export function writeTargets(cmd: SimpleCommand): string[] {
  if (cmd.start < 0) return [];
  const name = cmd.name;
  const out: string[] = [];
  const plan = Object.hasOwn(PLANS, name) ? PLANS[name]! : undefined;
  if (plan) {
    const o = operands(cmd, plan.spec);
    const ops = o.operands.filter((x) => !x.dynamic).map((x) => x.text);
    for (const opt of plan.into ?? []) {
      const v = o.values.get(opt);
      if (v !== undefined) out.push(v);
    }
    if (name === 'unzip') return out.map(intoRoot);
    if (plan.take === 'all') out.push(...ops);
    else if (plan.take === 'rest') out.push(...ops.slice(1));
    else if (out.length === 0 && ops.length >= (name === 'ln' ? 1 : 2)) out.push(ops.at(-1)!);
    return out.filter((p) => !/^[^/\s]*:/.test(p)); // rsync's host:path is not here
  }
  if (name === 'sed' || name === 'gsed' || name === 'perl') {
    const inPlace = cmd.args.some((a) => /^-[a-zA-Z]*i|^--in-place/.test(a));
    if (name === 'perl') {
      if (inPlace) out.push(...cmd.args.filter((a) => !a.startsWith('-')).slice(1));
      return out;
    }
    const words = cmd.args.map((text, k) => ({
      text,
      dynamic: cmd.dynamic[cmd.start + 1 + k] ?? false,
      glob: false,
      assign: false,
      quoted: true,
    }));
    const { scripts, files } = sedScripts(words);
    if (inPlace) out.push(...files.filter((f) => !f.dynamic).map((f) => f.text));
    for (const s of scripts) if (!s.dynamic) out.push(...readSed(s.text).writes);
    return out;
  }
  if (name === 'tar' || name === 'gtar' || name === 'bsdtar') {
    const first = cmd.args[0] ?? '';
    const extract =
      cmd.args.some((a) => /^-[A-Za-z]*x|^--(extract|get)$/.test(a)) ||
      (/^[A-Za-z]+$/.test(first) && first.includes('x'));
    if (!extract) return out;
    for (let k = 0; k < cmd.args.length; k++) {
      const a = cmd.args[k]!;
      if (a === '-C' || a === '--directory') out.push(cmd.args[k + 1] ?? '');
      else if (a.startsWith('--directory=')) out.push(a.slice(12));
      else if (/^-[A-Za-z]*C./.test(a)) out.push(a.slice(a.indexOf('C') + 1));
      else if (/^-[A-Za-z]*C$/.test(a)) out.push(cmd.args[k + 1] ?? '');
    }
    return out.map(intoRoot);
  }
  if (name === 'find')
    for (let k = 0; k < cmd.args.length; k++)
      if (/^-f(print0?|printf|ls)$/.test(cmd.args[k]!)) out.push(cmd.args[k + 1] ?? '');
  return out.filter((p) => p.length > 0);
}

/**
 * Programs that erase a disk by their nature (or with these subcommands or options): a disk or
 * partition among their operands is a hard refusal, like mkfs.
 */
export function erasesDisk(cmd: SimpleCommand): boolean {
  const { name, args } = cmd;
  switch (name) {
    case 'blkdiscard':
    case 'shred':
    case 'wipe':
    case 'sg_format':
      return true;
    case 'cryptsetup':
      return args.some((a) =>
        /^(luksFormat|format|erase|luksErase|reencrypt|luksKillSlot)$/.test(a),
      );
    case 'badblocks':
      return args.some((a) => /^-[a-zA-Z]*[wn]/.test(a));
    case 'nvme':
      return args.some((a) => /^(format|sanitize|write-zeroes|delete-ns|write)$/.test(a));
    case 'hdparm':
      return args.some((a) =>
        /^--(security-erase|trim-sector-ranges|write-sector|make-bad-sector|fwdownload|dco-restore)/.test(
          a,
        ),
      );
    case 'cp':
    case 'mv':
    case 'install':
    case 'truncate':
    case 'fallocate':
      return true; // their written operands (writeTargets) onto a disk
    default:
      return false;
  }
}
