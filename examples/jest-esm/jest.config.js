// Jest for an ES module project written in TypeScript: ts-jest emits ESM (`useESM`), `.ts` files are
// loaded as ES modules, and the `.js` endings of relative imports (required by `nodenext`) map back to
// the `.ts` sources. Run with `node --experimental-vm-modules` (see package.json).
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
};
