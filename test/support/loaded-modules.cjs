// Preloaded with `node --require`: when the process exits, writes every file it loaded through require() (the
// CLI's chunks are CommonJS) to $LOADED_MODULES_FILE, one path a line, followed by the Node builtins it loaded,
// as `node:<id>` (process.moduleLoadList names them "NativeModule <id>").
const { writeFileSync } = require('node:fs');

process.on('exit', () => {
  const builtins = process.moduleLoadList
    .filter((m) => m.startsWith('NativeModule '))
    .map((m) => `node:${m.slice(13)}`);
  writeFileSync(process.env.LOADED_MODULES_FILE, [...Object.keys(require.cache), ...builtins].join('\n'));
});
