import { Module } from '@nestjs/common';
import { SigningKeysRepository } from './signing-keys.repository';
import { SigningKeysService } from './signing-keys.service';

@Module({
  providers: [SigningKeysRepository, SigningKeysService],
  exports: [SigningKeysService],
})
export class SigningKeysModule {}
