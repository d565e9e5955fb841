import { describe, expect, it } from '@jest/globals';
import { DemoIdentityProvider } from '../../sample-app/auth/demo-identity.provider.js';

const client = { redirectUri: 'http://127.0.0.1:1/auth/callback', postLogoutRedirectUri: 'http://127.0.0.1:1/' };

describe("the sample's built-in identity provider", () => {
  it('serves its discovery document until it is destroyed', async () => {
    const provider = new DemoIdentityProvider();
    const issuer = await provider.issuer(client);
    const discovery = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(await discovery.json()).toMatchObject({ issuer });
    await provider.onModuleDestroy();
    await expect(fetch(`${issuer}/.well-known/openid-configuration`)).rejects.toThrow();
  });

  it('is stopped by a destroy that comes while it is still starting (an app that failed meanwhile)', async () => {
    const provider = new DemoIdentityProvider();
    const starting = provider.issuer(client);
    await provider.onModuleDestroy();
    const issuer = await starting;
    await expect(fetch(`${issuer}/.well-known/openid-configuration`)).rejects.toThrow();
  });
});
