import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { ResilienceModuleOptions } from './resilience-module-options.interface.js';

/** @internal */
export const {
  ConfigurableModuleClass: ConfigurableResilienceModule,
  /** DI token of the module's `ResilienceModuleOptions`, as given to `forRoot`/`forRootAsync`. @publicApi */
  MODULE_OPTIONS_TOKEN: RESILIENCE_MODULE_OPTIONS,
  OPTIONS_TYPE: RESILIENCE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: RESILIENCE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ResilienceModuleOptions>({ moduleName: 'Resilience' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createResilienceOptions')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
