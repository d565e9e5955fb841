import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The demo client the built-in identity provider knows. */
export const DEMO_CLIENT = { clientId: 'nest-resilience-sample', clientSecret: 'demo-secret-not-for-production' };

/** How the sample registers its demo client at the built-in provider. */
export interface DemoClientRegistration {
  readonly redirectUri: string;
  readonly postLogoutRedirectUri: string;
  /** `client_secret_basic` (default) or `client_secret_post`: the demo client has a secret. */
  readonly authMethod?: string;
}

/**
 * The sample app's built-in OpenID provider: `oidc-provider` with its development login pages, on a
 * loopback port, started only when no external issuer is configured (`OIDC_ISSUER`). Any user name
 * signs in.
 */
@Injectable()
export class DemoIdentityProvider implements OnModuleDestroy {
  private readonly logger = new Logger('DemoIdentityProvider');
  private server?: Server;
  private started?: Promise<string>;

  /** Starts the provider (once) and gives its issuer URL. */
  issuer(client: DemoClientRegistration): Promise<string> {
    this.started ??= this.start(client);
    return this.started;
  }

  async onModuleDestroy(): Promise<void> {
    // A start still in progress (the app failed while another part was starting) ends first, so its
    // server is closed too.
    await this.started?.catch(() => undefined);
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server!.close(resolve));
  }

  private async start({ redirectUri, postLogoutRedirectUri, authMethod }: DemoClientRegistration): Promise<string> {
    const { default: Provider } = await import('oidc-provider');
    const route: { handler?: (req: IncomingMessage, res: ServerResponse) => void } = {};
    this.server = createServer((req, res) => route.handler?.(req, res));
    await new Promise<void>((resolve) => this.server!.listen(Number(process.env.OIDC_PORT ?? 0), '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: DEMO_CLIENT.clientId,
          client_secret: DEMO_CLIENT.clientSecret,
          redirect_uris: [redirectUri],
          post_logout_redirect_uris: [postLogoutRedirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: authMethod ?? 'client_secret_basic',
        },
      ],
      pkce: { required: () => true },
      cookies: { keys: ['sample-app-cookie-key'] },
      rotateRefreshToken: true,
      issueRefreshToken: () => true,
      features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
      claims: { openid: ['sub'] },
      findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    } as never);
    const callback = provider.callback();
    route.handler = (req, res) => void callback(req, res);
    this.logger.log(`built-in identity provider on ${issuer} (any user name signs in)`);
    return issuer;
  }
}
