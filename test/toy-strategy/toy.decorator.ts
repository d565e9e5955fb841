import { strategyDecorator } from '../../src/index.js';
import type { ToyConfig } from './toy.descriptor.js';

/** `@Toy({ factor: 3 })`, `@Toy(3)` or `@Toy('pipelineName')`: the toy section on a method. */
export const Toy = strategyDecorator<ToyConfig>('toy');
