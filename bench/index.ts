// `npm run bench`: every benchmark of the project — the `list` pipeline, then start-up. Run inside
// scripts/with-keyring.sh (npm run bench does that) so the keychain figure reads a real Secret Service.
await import('./list.js');
const { benchStartup } = await import('./startup.js');
await benchStartup();
