// `npm run bench`: every benchmark of the project — start-up, then the `list` pipeline. Start-up goes first: after
// the multi-million-item walks the machine is still settling, Node's own start is slower, and every start-up ratio
// then reads lower than it is. Run inside scripts/with-keyring.sh (npm run bench does that) so the keychain figure
// reads a real Secret Service.
const { benchStartup } = await import('./startup.js');
await benchStartup();
await import('./list.js');
