// @ts-check
// What TypeDoc's options cannot express:
// - The members of an inline object type (`{ kind: … }` in a union, the nested values of a defaults
//   constant) are described by the comment of the declaration they belong to, so they are not required to
//   carry a comment of their own. Every other undocumented export or member still fails the build.
// - Each entry point's module is named by its import path (`nest-resilience/core`), not by its folder.
// - A guide's page is titled by its first heading (`# Resilient HTTP with @nestjs/axios`), not by its
//   file name, so the pages need no front matter (which GitHub would show as a table).
// - A ```mermaid fence of a guide becomes a diagram: the build writes its source, escaped, into
//   `<pre class="mermaid">` instead of highlighting it, and copies Mermaid's browser bundle from
//   node_modules into the site's assets (no CDN: the site works offline). `scripts/typedoc.diagrams.js`
//   (the site's `customJs`) loads that bundle on the pages that have a diagram and renders them.
import { cpSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Converter, ReflectionKind, RendererEvent } from 'typedoc';

/** Where the site's pages find Mermaid's bundle (next to `custom.js`, which loads it). */
export const MERMAID_ASSET = 'assets/mermaid.min.js';

const mermaidBundle = createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js');

/** @param {string} text */
const escapeHtml = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The site's `markdownItLoader`: a ```mermaid fence is rendered as `<pre class="mermaid">` holding its
 * source (which Mermaid reads as text), every other fence as before.
 *
 * @param {any} parser markdown-it's instance (TypeDoc's own dependency, not typed here)
 */
export function renderMermaidFences(parser) {
  const fence = parser.renderer.rules.fence;
  if (!fence) throw new Error('markdown-it has no fence renderer to extend');
  parser.renderer.rules.fence = (tokens, index, options, env, self) => {
    const token = tokens[index];
    if (token.info.trim() !== 'mermaid') return fence(tokens, index, options, env, self);
    return `<pre class="mermaid">${escapeHtml(token.content)}</pre>\n`;
  };
}

/** Import paths whose folder differs from the path (see `exports` in package.json). */
/** @type {Record<string, string>} */
const IMPORT_PATHS = {
  index: 'nest-resilience',
  'nest/http': 'nest-resilience/http',
  'nest/terminus': 'nest-resilience/terminus',
  'nest/admin': 'nest-resilience/admin',
  'nest/microservices': 'nest-resilience/microservices',
};

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getChildrenByKind(ReflectionKind.Module)) {
      module.name = IMPORT_PATHS[module.name] ?? `nest-resilience/${module.name}`;
    }
    for (const document of context.project.getReflectionsByKind(ReflectionKind.Document)) {
      if (!('content' in document) || !Array.isArray(document.content)) continue;
      const text = document.content.map((part) => part.text).join('');
      const heading = /^#\s+(.+)$/m.exec(text);
      if (heading) document.name = heading[1].replace(/`/g, '').trim();
    }
  });

  app.renderer.on(RendererEvent.END, (event) => {
    cpSync(mermaidBundle, join(event.outputDirectory, MERMAID_ASSET));
  });

  const logger = app.logger;
  const validationWarning = logger.validationWarning.bind(logger);
  logger.validationWarning = (message, ...rest) => {
    const text = String(message);
    if (/^\S+\.__type\.\S+ \(Property\), defined in .*, does not have any documentation$/.test(text)) return;
    validationWarning(message, ...rest);
  };
}
