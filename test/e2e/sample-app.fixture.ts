import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { parse, stringify } from 'yaml';
import { AppModule } from '../../sample-app/app.module.js';
import { DemoIdentityProvider } from '../../sample-app/auth/demo-identity.provider.js';
import { resilienceFilePath } from '../../sample-app/config/resilience-file.loader.js';

/** The parsed resilience file, to edit in a test. */
export type ResilienceDocument = {
  pipelines: Record<string, Record<string, unknown>>;
  oauth?: { tokenRequests?: Record<string, unknown> };
} & Record<string, unknown>;

/** A temporary copy of the sample's resilience file, for `RESILIENCE_CONFIG`. */
export class SampleConfigFile {
  readonly path: string;
  private readonly dir: string;

  constructor(edit?: (doc: ResilienceDocument) => void) {
    this.dir = mkdtempSync(join(tmpdir(), 'sample-config-'));
    this.path = join(this.dir, 'resilience.yaml');
    this.write(edit);
  }

  /** The default file of the sample, parsed. */
  static defaults(): ResilienceDocument {
    return parse(readFileSync(resilienceFilePath({}), 'utf8')) as ResilienceDocument;
  }

  /** Writes the default file with `edit` applied. */
  write(edit?: (doc: ResilienceDocument) => void): void {
    const doc = SampleConfigFile.defaults();
    edit?.(doc);
    writeFileSync(this.path, stringify(doc));
  }

  /** Writes this text as it is. */
  writeText(text: string): void {
    writeFileSync(this.path, text);
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Edits for fast tests: no retry delays in the weather and gateway pipelines. */
export function withoutRetryDelays(doc: ResilienceDocument): void {
  doc.pipelines.weather.retry = { ...(doc.pipelines.weather.retry as object), delay: 0 };
  doc.pipelines.gateway.retry = { ...(doc.pipelines.gateway.retry as object), delay: 0 };
}

/**
 * The sample app as `npm start` builds it (`app.init()`, no listening port), with `RESILIENCE_CONFIG`
 * naming `config` and the variables of `env` set while it starts. `REDIS_URL` (which the test setup
 * exports) is unset unless `env` gives it: by default circuits live in memory, as with nothing configured.
 */
export async function startSample(
  config: SampleConfigFile | undefined,
  options: {
    logger?: LoggerService | false;
    override?: (builder: TestingModuleBuilder) => TestingModuleBuilder;
    env?: Record<string, string | undefined>;
    /** Runs after the app is created and before `init()` (e.g. to connect a microservice). */
    beforeInit?: (app: INestApplication<App>) => Promise<void>;
  } = {},
): Promise<INestApplication<App>> {
  const env: Record<string, string | undefined> = {
    REDIS_URL: undefined,
    RESILIENCE_CONFIG: config?.path,
    ...options.env,
  };
  const previous = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(env);
  try {
    // The built-in provider starts while the module compiles; when the start fails there (an invalid
    // configuration), no app exists whose close() would stop it, so the fixture stops it.
    const demo = new DemoIdentityProvider();
    const builder = Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(DemoIdentityProvider)
      .useValue(demo);
    const moduleRef = await (options.override?.(builder) ?? builder).compile().catch(async (error: unknown) => {
      await demo.onModuleDestroy();
      throw error;
    });
    const app = moduleRef.createNestApplication<INestApplication<App>>({ logger: options.logger ?? false });
    try {
      await options.beforeInit?.(app);
      await app.init();
    } catch (error) {
      await app.close();
      throw error;
    }
    return app;
  } finally {
    apply(previous);
  }
}

/** Follows the built-in provider's login and consent pages like a browser (cookie jar, manual redirects). */
export async function signInAtProvider(authorizationUrl: string, user: string): Promise<string> {
  const jar = new Map<string, string>();
  let url = authorizationUrl;
  for (let step = 0; step < 20; step++) {
    if (url.includes('/auth/callback')) return url;
    const send = (target: string, body?: URLSearchParams) =>
      fetch(target, {
        method: body ? 'POST' : 'GET',
        body,
        redirect: 'manual',
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
      }).then((response) => {
        for (const set of response.headers.getSetCookie()) {
          const pair = set.split(';')[0];
          const i = pair.indexOf('=');
          if (pair.slice(i + 1)) jar.set(pair.slice(0, i), pair.slice(i + 1));
          else jar.delete(pair.slice(0, i));
        }
        return response;
      });
    let response = await send(url);
    if (response.status === 200) {
      const page = await response.text();
      const action = new URL(/action="([^"]+)"/.exec(page)![1], url).href;
      const prompt = /name="prompt" value="([^"]+)"/.exec(page)![1];
      response = await send(
        action,
        new URLSearchParams({ prompt, ...(prompt === 'login' ? { login: user, password: 'x' } : {}) }),
      );
    }
    url = new URL(response.headers.get('location')!, url).href;
  }
  throw new Error('too many redirects');
}

/** The `name=value` of a cookie the response sets. */
export const cookieOf = (response: request.Response, name: string): string | undefined =>
  (response.headers['set-cookie'] as unknown as string[] | undefined)
    ?.find((c) => c.startsWith(`${name}=`))
    ?.split(';')[0];

/**
 * The `name=value` of the session cookie the response sets: `nr_session` with `REDIS_URL` (shared by every
 * instance), else `nr_session_<port>` (one per instance).
 */
export const sessionCookieOf = (response: request.Response): string | undefined =>
  (response.headers['set-cookie'] as unknown as string[] | undefined)
    ?.find((c) => /^nr_session(_\d+)?=/.test(c))
    ?.split(';')[0];

/** Signs `user` in through `/auth/login` and the built-in provider: the session cookie and where it went back to. */
export async function signIn(
  server: App,
  user: string,
  returnTo?: string,
): Promise<{ cookie: string; location: string }> {
  const query = returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(returnTo)}`;
  const login = await request(server).get(`/auth/login${query}`).expect(302);
  const binding = cookieOf(login, 'nr_oauth_binding')!;
  const callback = new URL(await signInAtProvider(login.headers.location, user));
  const res = await request(server).get(`/auth/callback${callback.search}`).set('Cookie', binding).expect(303);
  return { cookie: sessionCookieOf(res)!, location: res.headers.location };
}
