import './toy.shortcuts.js';

export { toyStrategy, type ToyConfig, type ToyStrategyOptions } from './toy.descriptor.js';
export { Toy } from './toy.decorator.js';
