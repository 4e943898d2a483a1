// Injected into the CommonJS build (scripts/build.mjs), which has no import.meta: the bundle's own file URL.
/* global __filename */
import { pathToFileURL } from 'node:url';

export const importMetaUrl = pathToFileURL(__filename).href;
