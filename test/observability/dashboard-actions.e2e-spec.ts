import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { ResilienceModule, ResilienceValidationError } from '../../src/index.js';
import { ResilienceAdminModule, type DashboardAction } from '../../src/nest/admin/index.js';

function problems(options: Parameters<typeof ResilienceAdminModule.forRoot>[0]): [string, string][] {
  try {
    ResilienceAdminModule.forRoot(options);
  } catch (error) {
    expect(error).toBeInstanceOf(ResilienceValidationError);
    return (error as ResilienceValidationError).issues.map((i) => [i.path, i.rule]);
  }
  return [];
}

async function serve(dashboard: Parameters<typeof ResilienceAdminModule.forRoot>[0]['dashboard']) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({ logging: false, pipelines: { p: { retry: { maxRetryAttempts: 1, delay: 0 } } } }),
      ResilienceAdminModule.forRoot({ unprotected: true, dashboard }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication<INestApplication<App>>({ logger: false });
  await app.init();
  return app;
}

describe('dashboard actions: validation at start', () => {
  it('accepts dashboard: true, false, {} and well-formed actions', () => {
    expect(problems({ unprotected: true, dashboard: true })).toEqual([]);
    expect(problems({ unprotected: true, dashboard: false })).toEqual([]);
    expect(problems({ unprotected: true, dashboard: {} })).toEqual([]);
    expect(
      problems({
        unprotected: true,
        dashboard: {
          actions: [
            { label: 'Purge', url: '/cache/purge' },
            {
              group: 'flags',
              label: 'On',
              method: 'PUT',
              url: '/api/flags/x?force=1',
              body: { on: [true, 1, 'a', null] },
            },
            { group: 'flags', label: 'State', method: 'GET', url: '/api/flags/x', stateUrl: '/api/flags/x' },
            { group: 'flags', label: 'Off', method: 'DELETE', url: '/api/flags/x', activeWhen: { on: false, n: null } },
          ],
        },
      }),
    ).toEqual([]);
  });

  it('lists every bad action with its path in one error', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const actions = [
      { label: 'ok', url: '/fine' },
      { label: '', url: 'https://evil.example/steal' },
      { url: '//evil.example/x' },
      { label: 'x', url: '/a b', method: 'TRACE' },
      { label: 'x', url: '/x', method: 'GET', body: { a: 1 } },
      { label: 'x', url: '/x', body: { when: new Date(0) } },
      { label: 'x', url: '/x', body: cyclic },
      { label: 'x', url: '/x', body: () => 1 },
      { group: 'g', label: 'x', url: '/x', stateUrl: '/state/1' },
      { group: 'g', label: 'y', url: '/y', stateUrl: '/state/2' },
      { label: 'x', url: '/x', activeWhen: { mode: { nested: true } } },
      { label: 'x', url: '/x', colour: 'red' },
      'Purge',
      { label: 'x', url: '/\\evil.example' },
    ] as unknown as DashboardAction[];
    const found = problems({ unprotected: true, dashboard: { actions } });
    expect(found.map(([path]) => path)).toEqual([
      'admin.dashboard.actions[1].label',
      'admin.dashboard.actions[1].url',
      'admin.dashboard.actions[2].label',
      'admin.dashboard.actions[2].url',
      'admin.dashboard.actions[3].method',
      'admin.dashboard.actions[3].url',
      'admin.dashboard.actions[4].body',
      'admin.dashboard.actions[5].body',
      'admin.dashboard.actions[6].body',
      'admin.dashboard.actions[7].body',
      'admin.dashboard.actions[9].stateUrl',
      'admin.dashboard.actions[10].activeWhen',
      'admin.dashboard.actions[11].colour',
      'admin.dashboard.actions[12]',
      'admin.dashboard.actions[13].url',
    ]);
    expect(Object.fromEntries(found)).toMatchObject({
      'admin.dashboard.actions[1].url': expect.stringMatching(/same origin/),
      'admin.dashboard.actions[3].method': 'must be one of "GET", "POST", "PUT", "PATCH", "DELETE"',
      'admin.dashboard.actions[4].body': 'must not be given with method GET',
      'admin.dashboard.actions[9].stateUrl': expect.stringContaining('group "g" (/state/1)'),
    });
  });

  it('rejects a dashboard that is neither a boolean nor options, and unknown dashboard options', () => {
    expect(problems({ unprotected: true, dashboard: 'yes' as never })).toEqual([
      ['admin.dashboard', 'must be a boolean or the dashboard options ({ actions })'],
    ]);
    expect(
      problems({ unprotected: true, dashboard: { actions: {} as never, theme: 'dark' } as never }).map((p) => p[0]),
    ).toEqual(['admin.dashboard.theme', 'admin.dashboard.actions']);
  });
});

describe('dashboard actions: the served page', () => {
  let app: INestApplication<App>;
  const hostile = `<img src=x onerror="alert(1)"> & 'quotes'`;

  beforeAll(async () => {
    app = await serve({
      actions: [
        {
          group: 'weather upstream',
          label: 'Outage',
          method: 'PUT',
          url: '/upstreams/weather/mode',
          body: { mode: 'outage' },
          stateUrl: '/upstreams/weather',
          activeWhen: { mode: 'outage' },
        },
        {
          group: 'weather upstream',
          label: 'Healthy',
          method: 'PUT',
          url: '/upstreams/weather/mode',
          body: { mode: 'healthy' },
          activeWhen: { mode: 'healthy' },
        },
        { group: hostile, label: hostile, url: `/x?q="><script>alert(1)</script>`, body: { text: '</script><b>' } },
        { label: 'Purge', url: '/cache/purge' },
      ],
    });
  });

  afterAll(async () => {
    await app.close();
  });

  it('renders one box per group, in order, with a button per action', async () => {
    const html = (await request(app.getHttpServer()).get('/resilience/dashboard').expect(200)).text;
    const groups = [...html.matchAll(/<article class="card control-group" data-group="([^"]*)"/g)].map((m) => m[1]);
    expect(groups).toEqual([
      'weather upstream',
      '&#60;img src=x onerror=&#34;alert(1)&#34;&#62; &#38; &#39;quotes&#39;',
      'Actions',
    ]);
    expect(html).toContain(
      '<button type="button" data-method="PUT" data-url="/upstreams/weather/mode" data-body="{&#34;mode&#34;:&#34;outage&#34;}" data-active-when="{&#34;mode&#34;:&#34;outage&#34;}" aria-pressed="false">Outage</button>',
    );
    expect(html).toContain('data-state-url="/upstreams/weather"');
    expect(html).toContain('<button type="button" data-method="POST" data-url="/cache/purge">Purge</button>');
    expect(html.match(/data-role="answer"/g)).toHaveLength(3);
    expect(html.match(/data-role="state"/g)).toHaveLength(1); // only the group with a stateUrl
  });

  it('escapes every name and value from the configuration', async () => {
    const html = (await request(app.getHttpServer()).get('/resilience/dashboard').expect(200)).text;
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('</script><b>');
    expect(html.match(/<script/g)).toHaveLength(1); // the page's own script tag only
    expect(html).toContain('data-url="/x?q=&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;"');
    expect(html).not.toMatch(/https?:\/\//); // no CDN, no other origin
  });

  it("serves the script that sends the buttons' calls with the page's credentials and shows the answers", async () => {
    const js = (await request(app.getHttpServer()).get('/resilience/dashboard.js').expect(200)).text;
    expect(js).toContain('fetch(button.dataset.url, init)');
    expect(js).toContain("credentials: 'same-origin'");
    expect(js).toContain("'content-type'] = 'application/json'");
    expect(js).not.toContain('innerHTML');
    // No address of any origin; the one URI is SVG's namespace, which is a name, never fetched.
    expect(js.replaceAll("'http://www.w3.org/2000/svg'", '')).not.toMatch(/https?:\/\//);
  });

  it('leaves the box out without actions', async () => {
    const plain = await serve(true);
    const html = (await request(plain.getHttpServer()).get('/resilience/dashboard').expect(200)).text;
    expect(html).not.toContain('control-group');
    expect(html).not.toContain('id="controls"');
    await request(plain.getHttpServer())
      .get('/resilience')
      .expect(200, { control: false, dashboard: true, fleet: false });
    await plain.close();
  });
});
