import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'undici';
import { z } from 'zod';
import { PlatformError } from './adapter.js';
import { cdnMediaSchema } from './ilink-media.js';

/**
 * The WeChat personal-bot protocol (iLink) over HTTPS: QR issue and status for the login, then
 * authenticated JSON POSTs (getupdates long poll, sendmessage). Every answer is parsed by a
 * schema; a non-zero ret/errcode or an HTTP error is a PlatformError with the platform's words.
 */

const APP_HEADERS = { 'iLink-App-Id': 'bot', 'iLink-App-ClientVersion': '256' };
const BASE_INFO = { channel_version: '1.0.2' };

const qrSchema = z
  .object({ qrcode: z.string().min(1), qrcode_img_content: z.string().min(1) })
  .loose();
export const qrStatusSchema = z
  .object({
    status: z.enum(['wait', 'scaned', 'confirmed', 'expired', 'scaned_but_redirect']),
    bot_token: z.string().optional(),
    ilink_bot_id: z.string().optional(),
    ilink_user_id: z.string().optional(),
    baseurl: z.string().optional(),
    redirect_host: z.string().optional(),
  })
  .loose();
export type QrStatus = z.infer<typeof qrStatusSchema>;

const envelope = z
  .object({
    ret: z.number().int().optional(),
    errcode: z.number().int().optional(),
    errmsg: z.string().optional(),
  })
  .loose();

const media = { media: cdnMediaSchema.optional() };
const item = z
  .object({
    type: z.number().int(),
    text_item: z.object({ text: z.string() }).loose().optional(),
    /** An image may carry its key as hex in `aeskey` besides media.aes_key. */
    image_item: z
      .object({ ...media, aeskey: z.string().optional(), url: z.string().optional() })
      .loose()
      .optional(),
    /** A voice note; `text` is WeChat's transcript when it made one. */
    voice_item: z
      .object({ ...media, text: z.string().optional() })
      .loose()
      .optional(),
    /** `len` is the file's size in bytes, as a string. */
    file_item: z
      .object({
        ...media,
        file_name: z.string().optional(),
        len: z.union([z.string(), z.number()]).optional(),
      })
      .loose()
      .optional(),
    video_item: z.object(media).loose().optional(),
  })
  .loose();
export const ilinkMessageSchema = z
  .object({
    message_id: z.union([z.number(), z.string()]).optional(),
    seq: z.number().optional(),
    message_type: z.number().int().optional(),
    from_user_id: z.string().optional(),
    context_token: z.string().optional(),
    create_time_ms: z.number().optional(),
    item_list: z.array(item).default([]),
  })
  .loose();
export type IlinkMessage = z.infer<typeof ilinkMessageSchema>;
const uploadUrlSchema = z.object({ upload_param: z.string().min(1) }).loose();
const configSchema = z.object({ typing_ticket: z.string().min(1) }).loose();
const updatesSchema = z
  .object({ msgs: z.array(z.unknown()).default([]), get_updates_buf: z.string().optional() })
  .loose();

/** iLink error codes svc acts on. */
export const ILINK_SESSION_EXPIRED = -14;
export const ILINK_RATE_LIMITED = -2;

export class IlinkError extends PlatformError {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

async function call(
  url: string,
  init: {
    method: 'GET' | 'POST';
    headers: Record<string, string>;
    body?: string;
    timeoutMs: number;
    signal?: AbortSignal;
  },
): Promise<unknown> {
  const signal = init.signal
    ? AbortSignal.any([init.signal, AbortSignal.timeout(init.timeoutMs)])
    : AbortSignal.timeout(init.timeoutMs);
  let res;
  try {
    res = await request(url, {
      method: init.method,
      headers: init.headers,
      ...(init.body === undefined ? {} : { body: init.body }),
      signal,
    });
  } catch (err) {
    throw new IlinkError(0, `network error: ${(err as Error).message}`);
  }
  const text = await res.body.text();
  if (res.statusCode >= 400)
    throw new IlinkError(res.statusCode, `HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new IlinkError(0, 'the server answered something other than JSON');
  }
  const e = envelope.safeParse(json);
  const code = e.success ? e.data.ret || e.data.errcode || 0 : 0;
  if (code !== 0)
    throw new IlinkError(
      code,
      `error ${code}${e.success && e.data.errmsg ? `: ${e.data.errmsg}` : ''}`,
    );
  return json;
}

const trimBase = (u: string) => u.replace(/\/+$/, '');

const CDN_TRIES = 3;

/**
 * POSTs a ciphertext to the CDN; answers the download param it gives back (x-encrypted-param).
 * Tried up to three times, except a 4xx (the CDN refused it: trying again will not help).
 */
export async function cdnUpload(url: string, body: Buffer, signal?: AbortSignal): Promise<string> {
  let last = '';
  for (let attempt = 1; attempt <= CDN_TRIES; attempt++) {
    try {
      const timeout = AbortSignal.timeout(60_000);
      const res = await request(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/octet-stream' },
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      await res.body.text();
      const why = res.headers['x-error-message'];
      if (res.statusCode >= 400 && res.statusCode < 500)
        throw new IlinkError(
          res.statusCode,
          `the media CDN refused the file: HTTP ${res.statusCode}${typeof why === 'string' ? ` ${why}` : ''}`,
        );
      const param = res.headers['x-encrypted-param'];
      if (res.statusCode < 300 && typeof param === 'string' && param) return param;
      last = `HTTP ${res.statusCode}${typeof why === 'string' ? ` ${why}` : ''}${res.statusCode < 300 ? ' without a download param' : ''}`;
    } catch (err) {
      if (err instanceof IlinkError) throw err;
      last = `network error: ${(err as Error).message}`;
    }
  }
  throw new IlinkError(0, `the media CDN did not take the file after ${CDN_TRIES} tries (${last})`);
}

/** The login half: needs no token. */
export async function fetchQr(
  baseUrl: string,
  signal?: AbortSignal,
): Promise<{ id: string; url: string }> {
  const r = qrSchema.parse(
    await call(`${trimBase(baseUrl)}/ilink/bot/get_bot_qrcode?bot_type=3`, {
      method: 'GET',
      headers: APP_HEADERS,
      timeoutMs: 15_000,
      ...(signal ? { signal } : {}),
    }),
  );
  return { id: r.qrcode, url: r.qrcode_img_content };
}

export async function qrStatus(
  baseUrl: string,
  qr: string,
  signal?: AbortSignal,
): Promise<QrStatus> {
  return qrStatusSchema.parse(
    await call(
      `${trimBase(baseUrl)}/ilink/bot/get_qrcode_status?qrcode=${encodeURIComponent(qr)}`,
      { method: 'GET', headers: APP_HEADERS, timeoutMs: 40_000, ...(signal ? { signal } : {}) },
    ),
  );
}

/** The bot half: every call carries the token from the login. */
export class IlinkClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
  ) {}

  private post(
    path: string,
    body: Record<string, unknown>,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<unknown> {
    return call(`${trimBase(this.baseUrl)}/ilink/bot/${path}`, {
      method: 'POST',
      headers: {
        ...APP_HEADERS,
        'Content-Type': 'application/json',
        AuthorizationType: 'ilink_bot_token',
        Authorization: `Bearer ${this.token}`,
        // A fresh random uin per request, as the protocol's own clients send.
        'X-WECHAT-UIN': Buffer.from(String(randomBytes(4).readUInt32BE(0))).toString('base64'),
      },
      body: JSON.stringify({ ...body, base_info: BASE_INFO }),
      timeoutMs,
      ...(signal ? { signal } : {}),
    });
  }

  async getUpdates(
    cursor: string,
    signal: AbortSignal,
  ): Promise<{ msgs: IlinkMessage[]; cursor: string }> {
    const r = updatesSchema.parse(
      await this.post('getupdates', { get_updates_buf: cursor }, 50_000, signal),
    );
    const msgs = r.msgs.flatMap((m) => {
      const p = ilinkMessageSchema.safeParse(m);
      return p.success ? [p.data] : [];
    });
    return { msgs, cursor: r.get_updates_buf ?? cursor };
  }

  /** The ticket that lets the bot show "typing" to a user (asked with their context token). */
  async typingTicket(user: string, contextToken: string): Promise<string> {
    return configSchema.parse(
      await this.post('getconfig', { ilink_user_id: user, context_token: contextToken }, 15_000),
    ).typing_ticket;
  }

  /** 1 shows the typing indicator, 2 takes it away. */
  async sendTyping(user: string, ticket: string, status: 1 | 2): Promise<void> {
    await this.post('sendtyping', { ilink_user_id: user, typing_ticket: ticket, status }, 15_000);
  }

  async sendText(to: string, contextToken: string, text: string): Promise<string> {
    return this.sendItem(to, contextToken, { type: 1, text_item: { text } });
  }

  /** One message of one item (text, or media already on the CDN); answers its client id. */
  async sendItem(to: string, contextToken: string, item: Record<string, unknown>): Promise<string> {
    const clientId = randomUUID();
    await this.post(
      'sendmessage',
      {
        msg: {
          from_user_id: '',
          to_user_id: to,
          client_id: clientId,
          message_type: 2,
          message_state: 2,
          context_token: contextToken,
          item_list: [item],
        },
      },
      30_000,
    );
    return clientId;
  }

  /** Asks where to upload one encrypted file; answers the CDN's upload_param. */
  async uploadParam(req: {
    filekey: string;
    media_type: number;
    to_user_id: string;
    rawsize: number;
    rawfilemd5: string;
    filesize: number;
    aeskey: string;
  }): Promise<string> {
    return uploadUrlSchema.parse(
      await this.post('getuploadurl', { ...req, no_need_thumb: true }, 15_000),
    ).upload_param;
  }
}
