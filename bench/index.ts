// `npm run bench`: every benchmark of the project — start-up, then the `list` pipeline on loopback, then `list`
// over a shaped link, then the window's budgets (pages that grow, a server that slows with load). Start-up goes
// first: after the multi-million-item walks the machine is still settling, Node's own start is slower, and every
// start-up ratio then reads lower than it is. Run inside scripts/with-keyring.sh (npm run bench does that) so the
// keychain figure reads a real Secret Service.
// `--only startup|list|dump|link|window|etcd` runs one section (see bench/harness.ts for every flag).
import { benchFlags } from './harness.js';

const SECTIONS = ['startup', 'list', 'dump', 'link', 'window', 'etcd'] as const;
const { only } = benchFlags();
if (only !== undefined && !(SECTIONS as readonly string[]).includes(only)) {
  throw new Error(`--only takes one of ${SECTIONS.join(', ')}`);
}
const runs = (section: (typeof SECTIONS)[number]) => only === undefined || only === section;
if (runs('startup')) {
  const { benchStartup } = await import('./startup.js');
  await benchStartup();
}
if (runs('list')) {
  const { benchList } = await import('./list.js');
  await benchList();
}
if (runs('dump')) {
  const { benchDump } = await import('./list.js');
  await benchDump();
}
if (runs('link')) {
  const { benchLink } = await import('./link.js');
  await benchLink();
}
if (runs('window')) {
  const { benchWindow } = await import('./window.js');
  await benchWindow();
}
if (runs('etcd')) {
  const { benchEtcd } = await import('./etcd.js');
  await benchEtcd();
}
