import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a test can do to requests on their way to the provider's token endpoint. */
/** `drop`: forwarded to the provider (which spends the code), but the answer never reaches the client. */
export type TokenFault = 'none' | '503' | '429' | 'reset' | 'hang' | 'drop';

/**
 * A real OpenID provider (`oidc-provider`, dev interactions) on a loopback port, with PKCE required, a
 * confidential client and refresh-token rotation; plus a scriptable gateway in front of its token
 * endpoint that counts requests and injects faults before they reach the provider.
 */
export class TestIdentityProvider {
  issuer = '';
  gatewayUrl = '';
  tokenRequests = 0;
  /** Token requests forwarded to the provider and not answered yet. */
  inFlight = 0;
  readonly faults: TokenFault[] = [];
  private server?: Server;
  private gateway?: Server;

  constructor(
    readonly redirectUri: string,
    readonly clientId = 'web-app',
    readonly clientSecret = 'top-secret',
  ) {}

  async start(): Promise<this> {
    const { default: Provider } = await import('oidc-provider');
    const route: { handler?: (req: IncomingMessage, res: ServerResponse) => void } = {};
    this.server = createServer((req, res) => route.handler?.(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    const provider = new Provider(this.issuer, {
      clients: [
        {
          client_id: this.clientId,
          client_secret: this.clientSecret,
          redirect_uris: [this.redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        },
      ],
      pkce: { required: () => true },
      cookies: { keys: ['test-cookie-key'] },
      rotateRefreshToken: true,
      issueRefreshToken: () => true,
      features: { devInteractions: { enabled: true } },
      claims: { openid: ['sub'] },
      findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    } as never);
    const callback = provider.callback();
    route.handler = (req, res) => void callback(req, res);

    this.gateway = createServer((req, res) => this.forward(req, res));
    await new Promise<void>((resolve) => this.gateway!.listen(0, '127.0.0.1', resolve));
    this.gatewayUrl = `http://127.0.0.1:${(this.gateway.address() as AddressInfo).port}/token`;
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
      if (url.startsWith(this.redirectUri)) return new URL(url).searchParams;
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
      if (!location) throw new Error(`no redirect from ${url} (${response.status})`);
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

  /** The gateway: counts token requests, injects the next scripted fault, else forwards to the provider. */
  private forward(req: IncomingMessage, res: ServerResponse): void {
    this.tokenRequests++;
    const fault = this.faults.shift() ?? 'none';
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
    if (fault === 'hang') return;
    const chunks: Buffer[] = [];
    this.inFlight++;
    res.once('close', () => this.inFlight--);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void fetch(`${this.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? '', authorization: req.headers.authorization ?? '' },
        body: Buffer.concat(chunks),
      }).then(async (upstream) => {
        if (fault === 'drop') {
          await upstream.arrayBuffer();
          req.socket.destroy();
          return;
        }
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await upstream.arrayBuffer()));
      });
    });
  }
}
