import { extendPipelineBuilder, type ResiliencePipelineBuilder } from '../../src/index.js';
import { toyStrategy, type ToyStrategyOptions } from './toy.descriptor.js';

// Shortcuts merge into the module that declares the builder (a re-export cannot be augmented).
declare module '../../src/core/pipeline/resilience-pipeline.builder.js' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- a merged declaration repeats the class's type parameter
  interface ResiliencePipelineBuilder<T> {
    /** Multiplies a numeric result. */
    addToy(options?: ToyStrategyOptions): this;
  }
}

extendPipelineBuilder({
  addToy(this: ResiliencePipelineBuilder<unknown>, options: ToyStrategyOptions = {}) {
    return this.add(toyStrategy, options);
  },
});
