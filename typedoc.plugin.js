// @ts-check
// One documentation rule TypeDoc cannot express: the members of an inline object type (`{ kind: … }` in a
// union, the nested values of a defaults constant) are described by the comment of the declaration they
// belong to, so they are not required to carry a comment of their own. Every other undocumented export or
// member still fails the build.

/** @param {import('typedoc').Application} app */
export function load(app) {
  const logger = app.logger;
  const validationWarning = logger.validationWarning.bind(logger);
  logger.validationWarning = (message, ...rest) => {
    const text = String(message);
    if (/^\S+\.__type\.\S+ \(Property\), defined in .*, does not have any documentation$/.test(text)) return;
    validationWarning(message, ...rest);
  };
}
