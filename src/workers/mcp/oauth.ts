import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';
import { mcpOAuthFile } from '../../shared/paths.js';
import { redact } from '../../shared/log.js';
import { version } from '../../shared/version.js';

/**
 * OAuth for remote MCP servers, on the SDK's client flow (`auth()` from client/auth.js): this file
 * only keeps what the flow hands over. Per server one file, `$SVC_HOME/mcp-oauth/<name>.json`
 * (0600, in a 0700 folder): the client registration, the tokens and the discovery, bound to the
 * server's URL (a server pointed elsewhere starts over). Values the SDK stores are kept as given
 * (it stamps them with the issuer). Tokens and client secrets are registered with the log's
 * redaction as soon as they are seen, so no log line ever carries one.
 */

/** The server needs the user to sign in; the connection waits for them instead of retrying. */
export class NeedsSignIn extends Error {
  constructor() {
    super('the server asks you to sign in (OAuth)');
  }
}

const storedSchema = z.object({
  server_url: z.string(),
  /** The redirect URL of the last sign-in: a refresh presents the same client. */
  redirect_url: z.string().optional(),
  client_information: z
    .looseObject({
      client_id: z.string(),
      client_secret: z.string().optional(),
      redirect_uris: z.array(z.string()).optional(),
    })
    .optional(),
  tokens: z
    .looseObject({
      access_token: z.string(),
      token_type: z.string(),
      refresh_token: z.string().optional(),
    })
    .optional(),
  discovery: z.looseObject({ authorizationServerUrl: z.string() }).optional(),
});
type Stored = z.infer<typeof storedSchema>;

/** The OAuth file of one server. */
export class OAuthStore {
  readonly file: string;
  /** Only this process writes the file: it is read once. */
  private cache: Stored | undefined;

  constructor(
    home: string,
    readonly name: string,
    readonly serverUrl: string,
  ) {
    this.file = mcpOAuthFile(home, name);
  }

  read(): Stored {
    this.cache ??= this.load();
    return this.cache;
  }

  private load(): Stored {
    let parsed: Stored | undefined;
    try {
      const r = storedSchema.safeParse(JSON.parse(readFileSync(this.file, 'utf8')));
      if (r.success) parsed = r.data;
    } catch {
      // none yet, or unreadable: as if never signed in
    }
    if (!parsed || parsed.server_url !== this.serverUrl) return { server_url: this.serverUrl };
    redactStored(parsed);
    return parsed;
  }

  update(change: (s: Stored) => void): void {
    const s = structuredClone(this.read());
    change(s);
    redactStored(s);
    const dir = dirname(this.file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(s), { mode: 0o600 });
    renameSync(tmp, this.file);
    this.cache = s;
  }

  /** Whether tokens are stored (the user signed in once). */
  signedIn(): boolean {
    return this.read().tokens !== undefined;
  }

  forget(): void {
    rmSync(this.file, { force: true });
    this.cache = undefined;
  }
}

function redactStored(s: Stored): void {
  redact(s.tokens?.access_token);
  redact(s.tokens?.refresh_token);
  redact(s.client_information?.client_secret);
}

/**
 * What the provider is used for: `passive` for every connection (stored tokens, a refresh when
 * they expired, never a new sign-in: that is the user's to start); `start` when the user asked to
 * sign in (the authorization URL and the PKCE verifier are handed back); `finish` for the code the
 * authorization server sent back.
 */
export type ProviderMode =
  | { kind: 'passive' }
  | {
      kind: 'start';
      redirectUrl: string;
      state: string;
      started: (url: URL, verifier: string) => void;
    }
  | { kind: 'finish'; redirectUrl: string; verifier: string };

export class SvcOAuthProvider implements OAuthClientProvider {
  private verifier: string | undefined;

  constructor(
    private readonly store: OAuthStore,
    private readonly mode: ProviderMode,
  ) {}

  get redirectUrl(): string | undefined {
    // Passive: the URL of the last sign-in (never undefined once tokens exist: the SDK reads an
    // undefined one as a non-interactive client and would ask for tokens without a code).
    return this.mode.kind === 'passive' ? this.store.read().redirect_url : this.mode.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const redirect = this.redirectUrl;
    return {
      client_name: 'svc',
      software_version: version,
      redirect_uris: redirect ? [redirect] : [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    if (this.mode.kind === 'start') return this.mode.state;
    // Passive, and the SDK is about to start a new sign-in: the refresh failed. A refresh token it
    // kept means the failure was not a refusal (those drop it): retry later rather than ask the user.
    if (this.store.read().tokens?.refresh_token)
      throw new Error(
        'the authorization server did not refresh the OAuth token; trying again later',
      );
    throw new NeedsSignIn();
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const info = this.store.read().client_information;
    // A registration made for another redirect URL (svc reached at another address) is made again.
    const redirect = this.redirectUrl;
    if (info?.redirect_uris && redirect && !info.redirect_uris.includes(redirect)) return undefined;
    return info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.store.update((s) => {
      s.client_information = info as Stored['client_information'];
    });
  }

  tokens(): OAuthTokens | undefined {
    return this.store.read().tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    const redirect = this.redirectUrl;
    this.store.update((s) => {
      s.tokens = tokens;
      if (redirect) s.redirect_url = redirect;
    });
  }

  redirectToAuthorization(url: URL): void {
    if (this.mode.kind !== 'start' || this.verifier === undefined) throw new NeedsSignIn();
    this.mode.started(url, this.verifier);
  }

  saveCodeVerifier(verifier: string): void {
    if (this.mode.kind !== 'start') throw new NeedsSignIn();
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (this.mode.kind !== 'finish') throw new NeedsSignIn();
    return this.mode.verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'verifier') return;
    this.store.update((s) => {
      if (scope === 'all' || scope === 'client') delete s.client_information;
      if (scope === 'all' || scope === 'tokens') delete s.tokens;
      if (scope === 'all' || scope === 'discovery') delete s.discovery;
    });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    const s = this.store.read();
    // The first thing the SDK's flow asks: a passive connection with nothing to refresh stops here.
    if (this.mode.kind === 'passive' && !s.tokens) throw new NeedsSignIn();
    return s.discovery as OAuthDiscoveryState | undefined;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.store.update((s) => {
      s.discovery = { ...state };
    });
  }
}
