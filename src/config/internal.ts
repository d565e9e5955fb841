/**
 * What the package's other layers use of configuration that is not its public API. Not a package
 * entry; ESLint refuses it outside `src/`.
 *
 * @internal
 */
export { coercePipelineConfig } from './pipeline-config/config-value.coercion.js';
