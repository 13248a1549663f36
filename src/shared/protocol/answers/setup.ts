import { z } from 'zod';
import { healthView } from '../answers.js';

/** The answers of onboarding's last steps (/api/onboard/setup, /api/onboard/phone). zod and node-free. */

export const setupView = z.lazy(() =>
  z.object({
    service: z.object({
      /** process.platform: linux, darwin, win32, … */
      platform: z.string(),
      /** The command that installs svc as a service here, or null where there is none. */
      command: z.string().nullable(),
      /** The same, listening on every address (for a phone). */
      command_lan: z.string().nullable(),
    }),
    phone: z.object({
      /** host:port svc listens on, or null when the supervisor does not say. */
      listen: z.string().nullable(),
      /** Whether a device on the network reaches that address. */
      reachable: z.boolean(),
      /** The addresses a phone on the same network opens. */
      addresses: z.array(z.string()),
      /** The command that makes svc listen on every address. */
      listen_command: z.string(),
    }),
    sandbox: healthView.unwrap().shape.sandbox,
  }),
);

/** Only to a request that carries the access key already: the key is in both. */
export const phoneSignIn = z.lazy(() =>
  z.object({
    /** The address with the access key (?access_key=…). */
    url: z.string(),
    /** The same as a QR code: a PNG data URL. */
    qr_png: z.string(),
  }),
);
