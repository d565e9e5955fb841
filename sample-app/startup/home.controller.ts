import { Controller, Get, Header } from '@nestjs/common';
import { TOUR } from './startup.banner.js';

const escape = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** `GET /`: the links of the tour, the dashboard, health and metrics. */
@Controller()
export class HomeController {
  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  home(): string {
    const link = (what: string, path: string) =>
      `<li><a href="${escape(path)}">${escape(path)}</a> — ${escape(what)}</li>`;
    return [
      '<!doctype html><title>nest-resilience sample</title><h1>nest-resilience sample</h1>',
      '<ul>',
      link('live dashboard (sign in first)', '/resilience/dashboard'),
      link('health (Terminus, with the circuits)', '/health'),
      link('Prometheus metrics', '/metrics'),
      link('who is signed in', '/auth/me'),
      '</ul><h2>Tour</h2><ul>',
      ...TOUR.map(([what, path]) => link(what, path)),
      '</ul>',
    ].join('\n');
  }
}
