import { networkInterfaces } from 'node:os';
import { ApiError } from '../../shared/errors.js';
import { formatHostPort, isLoopbackBind, parseListenAddr } from '../../shared/net/addr.js';
import { sandboxStatus } from '../../shared/sandbox/status.js';
import { phoneSignIn, setupView } from '../../shared/protocol/answers/setup.js';
import type { Deps } from '../deps.js';
import { requireKey } from '../person.js';
import { route, type Route } from '../route.js';
import { importPackage } from '../../shared/import-package.js';

/** The address a phone on the same network would use: every private IPv4 of this machine. */
function lanAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) out.push(a.address);
  return out;
}

/** The `svc service` command for this OS, or null where svc has no service manager to use. */
function serviceCommand(platform: NodeJS.Platform): string | null {
  return platform === 'linux' || platform === 'darwin' ? 'svc service install' : null;
}

/**
 * What onboarding's last steps show: the service install command for this OS, how a phone on the
 * same network reaches svc (and, to the person who holds the key, the address with the key), and
 * the sandbox's state with its fix.
 */
export function setupRoutes(deps: Deps): Route[] {
  const listening = async () => {
    const status = await deps.endpoint.request('supervisor.status', {});
    return status.addr ? parseListenAddr(status.addr) : undefined;
  };
  return [
    route({
      method: 'GET',
      path: '/api/onboard/setup',
      summary:
        "Onboarding's last steps: service (this OS, the install command, or null where there is none), phone (the address svc listens on, whether the network reaches it, the addresses a phone on the same network opens, or the command that makes svc listen there) and sandbox (on, off or unavailable, with the fix). Carries no key.",
      response: setupView,
      handler: async () => {
        const listen = await listening();
        const port = listen?.port ?? 8088;
        const reachable = listen !== undefined && !isLoopbackBind(listen);
        const addresses =
          listen === undefined
            ? []
            : listen.host === ''
              ? lanAddresses().map((ip) => `http://${formatHostPort(ip, port)}/`)
              : reachable
                ? [`http://${formatHostPort(listen.host, port)}/`]
                : [];
        const command = serviceCommand(process.platform);
        const sandbox = await sandboxStatus(deps.config().sandbox.enabled);
        return {
          body: {
            service: {
              platform: process.platform,
              command,
              command_lan: command && `${command} --addr :${port}`,
            },
            phone: {
              listen: listen ? formatHostPort(listen.host || '0.0.0.0', port) : null,
              reachable,
              addresses,
              listen_command: `svc serve --addr :${port}`,
            },
            sandbox: { state: sandbox.state, message: sandbox.message },
          },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/api/onboard/phone',
      summary:
        'The address with the access key a phone opens to sign in (url), and the same as a QR code (qr_png, a PNG data URL). Only to a request that carries the key already (403 key_required otherwise, even on loopback): the key is never shown to a program that only reaches svc from this machine.',
      response: phoneSignIn,
      errors: [503],
      handler: async ({ keyed }) => {
        requireKey(keyed, 'Showing the access key');
        const key = deps.accessKey?.();
        if (!key)
          throw new ApiError(
            'unavailable',
            'This server cannot show its key here; run "svc key show" on its machine.',
          );
        const listen = await listening();
        const port = listen?.port ?? 8088;
        const host =
          listen && listen.host !== '' && !isLoopbackBind(listen)
            ? listen.host
            : (lanAddresses()[0] ?? '127.0.0.1');
        const url = `http://${formatHostPort(host, port)}/?access_key=${encodeURIComponent(key)}`;
        const { default: QRCode } = await importPackage<{ default: typeof import('qrcode') }>(
          'qrcode',
        ); // only this step needs it
        const qr_png = await QRCode.toDataURL(url, {
          errorCorrectionLevel: 'M',
          margin: 2,
          width: 240,
        });
        return { body: { url, qr_png }, headers: { 'Cache-Control': 'no-store' } };
      },
    }),
  ];
}
