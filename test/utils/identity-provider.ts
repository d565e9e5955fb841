import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';

/** What a test can do to requests on their way to the provider's token endpoint. */
/** `drop`: forwarded to the provider (which spends the code), but the answer never reaches the client. */
export type TokenFault =
  | 'none'
  | '503'
  | '429'
  | 'reset'
  | 'hang'
  | 'drop'
  /** Answered by the gateway, never forwarded. `retryAfter` is sent as given (seconds or an HTTP-date). */
  | { status: number; body?: string; contentType?: string; retryAfter?: string; wwwAuthenticate?: string }
  /** Forwarded (the code is spent), then the provider's 200 is altered on its way back. */
  | { tamper: IdTokenTamper | 'not-a-token-response' | 'html-200' };

/** Ways to spoil the ID token of a genuine token response (re-signed with the provider's own key, unless `alg-none`). */
export type IdTokenTamper =
  | 'alg-none'
  | 'wrong-aud'
  | 'wrong-iss'
  | 'expired'
  | 'no-nonce'
  | 'wrong-nonce'
  | 'bad-signature'
  | 'wrong-sub'
  /** Signed by another key that carries the provider key's `kid`. */
  | 'other-key';

/** The clients the provider knows, by authentication method. */
export interface TestClients {
  basic: { clientId: string; clientSecret: string };
  post: { clientId: string; clientSecret: string };
  privateKeyJwt: { clientId: string; privateKey: JWK };
  none: { clientId: string };
}

/**
 * A real OpenID provider (`oidc-provider`, dev interactions) on a loopback port, with PKCE required,
 * one client per token-endpoint authentication method and refresh-token rotation; plus a scriptable
 * gateway in front of its token endpoint that counts requests, injects faults before they reach the
 * provider, can alter the provider's answers, and records every secret it sees (for log scans).
 */
export class TestIdentityProvider {
  issuer = '';
  gatewayUrl = '';
  private gatewayBase = '';
  tokenRequests = 0;
  /** Token requests forwarded to the provider and not answered yet. */
  inFlight = 0;
  /** Token requests the gateway holds without ever answering (`hang`), until the client closes them. */
  hanging = 0;
  /** For each held request the client closed: how long after it arrived, in ms (real time). */
  readonly hungClosedAfter: number[] = [];
  readonly faults: TokenFault[] = [];
  /** Every secret that crossed the gateway: codes, verifiers, secrets, assertions, tokens, Authorization headers. */
  readonly secretsSeen = new Set<string>();
  /** The reasons the provider gave itself for refusing token requests (clients only see the code). */
  readonly providerErrors: string[] = [];
  clients!: TestClients;
  private server?: Server;
  private gateway?: Server;
  private signingKey?: { key: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']; kid: string };

  constructor(
    readonly redirectUri: string,
    readonly clientId = 'web-app',
    readonly clientSecret = 'top-secret-of-the-web-app',
    private readonly settings: { clientAuthMethods?: string[]; postLogoutRedirectUri?: string } = {},
  ) {}

  async start(): Promise<this> {
    const { default: Provider } = await import('oidc-provider');
    const route: { handler?: (req: IncomingMessage, res: ServerResponse) => void } = {};
    this.server = createServer((req, res) => route.handler?.(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;

    const signing = await generateKeyPair('RS256', { extractable: true });
    const providerJwk = { ...(await exportJWK(signing.privateKey)), kid: 'provider-key', alg: 'RS256', use: 'sig' };
    this.signingKey = { key: signing.privateKey, kid: 'provider-key' };
    const clientKeys = await generateKeyPair('ES256', { extractable: true });
    const clientPrivate = { ...(await exportJWK(clientKeys.privateKey)), kid: 'client-key', alg: 'ES256' };
    const clientPublic = { ...(await exportJWK(clientKeys.publicKey)), kid: 'client-key', alg: 'ES256', use: 'sig' };
    this.clients = {
      basic: { clientId: this.clientId, clientSecret: this.clientSecret },
      post: { clientId: `${this.clientId}-post`, clientSecret: `${this.clientSecret}-post` },
      privateKeyJwt: { clientId: `${this.clientId}-jwt`, privateKey: clientPrivate },
      none: { clientId: `${this.clientId}-public` },
    };
    this.secretsSeen.add(this.clients.basic.clientSecret);
    this.secretsSeen.add(this.clients.post.clientSecret);
    this.secretsSeen.add(String(clientPrivate.d));

    const common = {
      redirect_uris: [this.redirectUri],
      post_logout_redirect_uris: [this.settings.postLogoutRedirectUri ?? new URL('/signed-out', this.redirectUri).href],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
    this.gateway = createServer((req, res) => {
      if (req.url === '/client-jwks') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [clientPublic] }));
        return;
      }
      this.forward(req, res);
    });
    await new Promise<void>((resolve) => this.gateway!.listen(0, '127.0.0.1', resolve));
    this.gatewayBase = `http://127.0.0.1:${(this.gateway.address() as AddressInfo).port}`;
    this.gatewayUrl = `${this.gatewayBase}/token`;
    const provider = new Provider(this.issuer, {
      clients: [
        {
          ...common,
          client_id: this.clients.basic.clientId,
          client_secret: this.clients.basic.clientSecret,
          token_endpoint_auth_method: 'client_secret_basic',
        },
        {
          ...common,
          client_id: this.clients.post.clientId,
          client_secret: this.clients.post.clientSecret,
          token_endpoint_auth_method: 'client_secret_post',
        },
        {
          ...common,
          client_id: this.clients.privateKeyJwt.clientId,
          token_endpoint_auth_method: 'private_key_jwt',
          token_endpoint_auth_signing_alg: 'ES256',
          // Served by the gateway (static `jwks` objects do not survive the provider's cloning under Jest's VM realm).
          jwks_uri: `${this.gatewayBase}/client-jwks`,
        },
        { ...common, client_id: this.clients.none.clientId, token_endpoint_auth_method: 'none' },
      ],
      ...(this.settings.clientAuthMethods ? { clientAuthMethods: this.settings.clientAuthMethods } : {}),
      jwks: { keys: [providerJwk] },
      pkce: { required: () => true },
      cookies: { keys: ['test-cookie-key'] },
      rotateRefreshToken: true,
      issueRefreshToken: () => true,
      features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
      claims: { openid: ['sub'] },
      findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    } as never);
    const remember = (_ctx: unknown, error: Error & { error_detail?: string; error_description?: string }) =>
      this.providerErrors.push(`${error.message}: ${error.error_detail ?? error.error_description ?? ''}`);
    provider.on('grant.error', remember);
    provider.on('server_error', remember);
    const callback = provider.callback();
    route.handler = (req, res) => void callback(req, res);

    return this;
  }

  async stop(): Promise<void> {
    for (const s of [this.server, this.gateway]) {
      s?.closeAllConnections();
      await new Promise((resolve) => s?.close(resolve));
    }
  }

  /**
   * Walks the provider's login and consent pages like a browser would (a cookie jar, manual redirects)
   * and returns the callback's query string.
   */
  async authorize(authorizationUrl: string, login = 'alice'): Promise<URLSearchParams> {
    const jar = new Map<string, string>();
    let url = authorizationUrl;
    for (let step = 0; step < 20; step++) {
      if (url.startsWith(this.redirectUri)) {
        const query = new URL(url).searchParams;
        const code = query.get('code');
        if (code) this.secretsSeen.add(code);
        for (const value of jar.values()) if (value.length >= 16) this.secretsSeen.add(value);
        return query;
      }
      let response = await this.fetchWithJar(url, jar);
      if (response.status === 200) {
        const page = await response.text();
        const action = /action="([^"]+)"/.exec(page)?.[1];
        const prompt = /name="prompt" value="([^"]+)"/.exec(page)?.[1];
        if (!action || !prompt) throw new Error(`unexpected page at ${url}`);
        const body = new URLSearchParams({ prompt, ...(prompt === 'login' ? { login, password: 'x' } : {}) });
        response = await this.fetchWithJar(new URL(action, this.issuer).href, jar, body);
      }
      const location = response.headers.get('location');
      if (!location) {
        const page = (await response.text().catch(() => '')).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
        throw new Error(`no redirect from ${url} (${response.status}): ${page.slice(page.lastIndexOf('error :'))}`);
      }
      url = new URL(location, this.issuer).href;
    }
    throw new Error('too many redirects');
  }

  private async fetchWithJar(url: string, jar: Map<string, string>, body?: URLSearchParams): Promise<Response> {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await fetch(url, {
      method: body ? 'POST' : 'GET',
      body,
      redirect: 'manual',
      headers: { cookie, ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    for (const set of response.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (value) jar.set(name, value);
      else jar.delete(name);
    }
    return response;
  }

  /** Remembers the secrets of a token request. */
  private recordRequest(req: IncomingMessage, body: Buffer): void {
    const authorization = req.headers.authorization;
    if (authorization) {
      this.secretsSeen.add(authorization);
      const basic = /^Basic (.+)$/i.exec(authorization)?.[1];
      if (basic) {
        this.secretsSeen.add(basic);
        const decoded = Buffer.from(basic, 'base64').toString();
        this.secretsSeen.add(decodeURIComponent(decoded.slice(decoded.indexOf(':') + 1)));
      }
    }
    const form = new URLSearchParams(body.toString());
    for (const name of ['code', 'code_verifier', 'refresh_token', 'client_secret', 'client_assertion']) {
      const value = form.get(name);
      if (value) this.secretsSeen.add(value);
    }
  }

  /** The gateway: counts token requests, injects the next scripted fault, else forwards to the provider. */
  private forward(req: IncomingMessage, res: ServerResponse): void {
    this.tokenRequests++;
    const fault = this.faults.shift() ?? 'none';
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => this.recordRequest(req, Buffer.concat(chunks)));
    if (fault === '503') {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"server_error"}');
      return;
    }
    if (fault === '429') {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"error":"slow_down"}');
      return;
    }
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault === 'hang') {
      this.hanging++;
      const arrived = performance.now();
      req.socket.once('close', () => {
        this.hanging--;
        this.hungClosedAfter.push(performance.now() - arrived);
      });
      return;
    }
    if (typeof fault === 'object' && 'status' in fault) {
      const headers: Record<string, string> = { 'content-type': fault.contentType ?? 'application/json' };
      if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
      if (fault.wwwAuthenticate !== undefined) headers['www-authenticate'] = fault.wwwAuthenticate;
      req.on('end', () => res.writeHead(fault.status, headers).end(fault.body ?? ''));
      return;
    }
    this.inFlight++;
    res.once('close', () => this.inFlight--);
    req.on('end', () => {
      void fetch(`${this.issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': req.headers['content-type'] ?? '',
          ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        },
        body: Buffer.concat(chunks),
      }).then(async (upstream) => {
        let body = Buffer.from(await upstream.arrayBuffer());
        if (fault === 'drop') {
          req.socket.destroy();
          return;
        }
        const headers: Record<string, string> = {};
        for (const name of ['content-type', 'cache-control', 'pragma', 'www-authenticate', 'retry-after']) {
          const value = upstream.headers.get(name);
          if (value) headers[name] = value;
        }
        if (upstream.status === 200) {
          const json = JSON.parse(body.toString()) as Record<string, unknown>;
          for (const name of ['access_token', 'refresh_token', 'id_token']) {
            if (typeof json[name] === 'string') this.secretsSeen.add(json[name]);
          }
          if (typeof fault === 'object' && 'tamper' in fault) {
            if (fault.tamper === 'html-200') {
              headers['content-type'] = 'text/html';
              body = Buffer.from('<!doctype html><title>Maintenance</title><p>We will be back soon.</p>');
            } else if (fault.tamper === 'not-a-token-response') {
              body = Buffer.from(JSON.stringify({ status: 'ok', message: 'welcome' }));
            } else {
              json.id_token = await this.spoil(String(json.id_token), fault.tamper);
              body = Buffer.from(JSON.stringify(json));
            }
          }
        }
        res.writeHead(upstream.status, headers);
        res.end(body);
      });
    });
  }

  /** An ID token with one defect, otherwise genuine (signed with the provider's key unless `alg-none`). */
  private async spoil(idToken: string, tamper: IdTokenTamper): Promise<string> {
    const claims = { ...decodeJwt(idToken) };
    const now = Math.floor(Date.now() / 1_000);
    if (tamper === 'wrong-aud') claims.aud = 'another-client';
    if (tamper === 'wrong-iss') claims.iss = 'https://evil.example';
    if (tamper === 'expired') Object.assign(claims, { iat: now - 7_200, exp: now - 3_600 });
    if (tamper === 'no-nonce') delete claims.nonce;
    if (tamper === 'wrong-nonce') claims.nonce = 'a-nonce-of-another-login';
    if (tamper === 'wrong-sub') claims.sub = 'another-user';
    if (tamper === 'alg-none') {
      const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`;
    }
    const key = tamper === 'other-key' ? (await generateKeyPair('RS256')).privateKey : this.signingKey!.key;
    const signed = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: this.signingKey!.kid }).sign(key);
    if (tamper !== 'bad-signature') return signed;
    const [header, payload] = signed.split('.');
    return `${header}.${payload}.${Buffer.alloc(256, 7).toString('base64url')}`;
  }
}
