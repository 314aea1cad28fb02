export { SigningKeyEntity } from './signing-key.entity';
export { SigningKeysModule } from './signing-keys.module';
export { SigningKeysService, type TokenRequest } from './signing-keys.service';
