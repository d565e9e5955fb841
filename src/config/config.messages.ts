import { ENGINE_RULES, knownNames } from '../core/internal.js';

/**
 * Every rule text configuration reports (`ValidationIssue.rule`) besides the engine's own, which it
 * reports in the engine's words (`ENGINE_RULES`), and the errors of a misused strategy catalog.
 *
 * @internal
 */
export const CONFIG_RULES = {
  ...ENGINE_RULES,
  sectionsObject: 'must be an object of strategy sections',
  sectionValue: (numberOption: string | undefined) =>
    numberOption === undefined
      ? 'must be an object of options'
      : `must be an object of options, or a number (its ${numberOption})`,
  pipelinesObject: 'must be an object of named pipelines',
  noSectionInDescriptor: (type: string, name: string) => `The ${type} strategy has no "${name}" section.`,
  sectionTaken: (name: string) => `The strategy catalog has a "${name}" section already.`,
  noCatalogLine: (name: string) => `The strategy catalog has no "${name}" line to place a strategy by.`,
  alreadyRegistered: 'is already registered',
  predicateReference: 'must be a predicate name, a list of names or a function',
  unknownPredicate: (name: string, known: readonly string[]) =>
    `is not a registered predicate (${knownNames(name, known)})`,
} as const;
