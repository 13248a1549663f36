import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import type {
  AuthenticationCreds,
  AuthenticationState,
  SignalDataTypeMap,
} from '@whiskeysockets/baileys';
import { writeFileAtomic } from '../../shared/atomic-write.js';

type Baileys = typeof import('@whiskeysockets/baileys');

/** A key id as a file name: no separators, nothing that climbs out of the folder. */
const fileName = (name: string) => `${name.replace(/[/\\]/g, '__').replace(/:/g, '-')}.json`;

/**
 * WhatsApp's session keys (Baileys' auth state: creds plus the Signal keys), one JSON file per
 * key as Baileys' own multi-file store keeps them, but every file written atomically 0600 in a
 * 0700 folder. The keys are the account: they never leave this folder except to WhatsApp.
 */
export class WaAuthStore {
  constructor(readonly dir: string) {}

  /** Whether a login left credentials here (the account is registered). */
  account(): string | undefined {
    try {
      const raw: unknown = JSON.parse(readFileSync(join(this.dir, fileName('creds')), 'utf8'));
      if (typeof raw !== 'object' || raw === null) return undefined;
      const me = (raw as { me?: { id?: unknown } }).me;
      return typeof me?.id === 'string' ? phoneOf(me.id) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The saved state (fresh credentials when there are none) and how to save the credentials. */
  open(baileys: Baileys): { state: AuthenticationState; saveCreds: () => void } {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    const read = (name: string): unknown => {
      try {
        return JSON.parse(
          readFileSync(join(this.dir, fileName(name)), 'utf8'),
          baileys.BufferJSON.reviver,
        );
      } catch {
        return null;
      }
    };
    const write = (name: string, value: unknown) => {
      // A removed store (logged out, or a login's keys moved into place) takes no late writes.
      if (!existsSync(this.dir)) return;
      writeFileAtomic(
        join(this.dir, fileName(name)),
        JSON.stringify(value, baileys.BufferJSON.replacer),
        0o600,
      );
    };
    const creds = (read('creds') as AuthenticationCreds | null) ?? baileys.initAuthCreds();
    const state: AuthenticationState = {
      creds,
      keys: {
        get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
          const out: { [id: string]: SignalDataTypeMap[T] } = {};
          for (const id of ids) {
            let value = read(`${type}-${id}`);
            if (type === 'app-state-sync-key' && value)
              value = baileys.proto.Message.AppStateSyncKeyData.fromObject(
                value as Record<string, unknown>,
              );
            if (value !== null) out[id] = value as SignalDataTypeMap[T];
          }
          return out;
        },
        set: async (data) => {
          for (const [category, entries] of Object.entries(data)) {
            for (const [id, value] of Object.entries(entries ?? {})) {
              if (value) write(`${category}-${id}`, value);
              else rmSync(join(this.dir, fileName(`${category}-${id}`)), { force: true });
            }
          }
        },
      },
    };
    return { state, saveCreds: () => write('creds', creds) };
  }

  /** Logout: every key gone. */
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Files left by a login that never finished (no account in them). */
  clearUnregistered(): void {
    if (this.account()) return;
    let names: string[] = [];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const n of names) unlinkSync(join(this.dir, n));
  }
}

/** "4915123456789:12@s.whatsapp.net" → "4915123456789". */
export function phoneOf(jid: string): string {
  return jid.split('@')[0]!.split(':')[0]!;
}
