export { keyFilePath, readOrCreateKeyFile, writeKeyFile } from './key-file';
export { isSealed, SecretBox, type SecretPurpose } from './secret-box';
export {
  generateKeyText,
  keyIdOf,
  keyringText,
  parseKeyring,
  SECRET_KEY_BYTES,
  withNewCurrentKey,
  type SecretKey,
  type SecretKeyring,
} from './secret-keyring';
export { SecretsModule } from './secrets.module';
