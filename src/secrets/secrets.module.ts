import { DynamicModule, Module } from '@nestjs/common';
import { SecretBox } from './secret-box';
import type { SecretKeyring } from './secret-keyring';

/** The process's SecretBox, for every module that keeps secrets at rest. */
@Module({})
export class SecretsModule {
  static forRoot(keyring: SecretKeyring): DynamicModule {
    return {
      module: SecretsModule,
      providers: [{ provide: SecretBox, useValue: new SecretBox(keyring) }],
      exports: [SecretBox],
      global: true,
    };
  }
}
