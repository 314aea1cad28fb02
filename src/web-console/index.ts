export { CONSOLE_CSP, CONSOLE_PATH, consoleAssets, consoleAssetsDir } from './console-assets';
