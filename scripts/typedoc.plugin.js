// @ts-check
// Two things TypeDoc's options cannot express:
// - The members of an inline object type (`{ kind: … }` in a union, the nested values of a defaults
//   constant) are described by the comment of the declaration they belong to, so they are not required to
//   carry a comment of their own. Every other undocumented export or member still fails the build.
// - Each entry point's module is named by its import path (`nest-resilience/core`), not by its folder.
// - A guide's page is titled by its first heading (`# Resilient HTTP with @nestjs/axios`), not by its
//   file name, so the pages need no front matter (which GitHub would show as a table).
import { Converter, ReflectionKind } from 'typedoc';

/** Import paths whose folder differs from the path (see `exports` in package.json). */
/** @type {Record<string, string>} */
const IMPORT_PATHS = {
  index: 'nest-resilience',
  'nest/http': 'nest-resilience/http',
  'nest/terminus': 'nest-resilience/terminus',
  'nest/admin': 'nest-resilience/admin',
  'nest/rpc': 'nest-resilience/microservices',
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

  const logger = app.logger;
  const validationWarning = logger.validationWarning.bind(logger);
  logger.validationWarning = (message, ...rest) => {
    const text = String(message);
    if (/^\S+\.__type\.\S+ \(Property\), defined in .*, does not have any documentation$/.test(text)) return;
    validationWarning(message, ...rest);
  };
}
