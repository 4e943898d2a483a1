// Preloaded with `node --require`: when the process exits, writes every file it loaded through require() (the
// CLI's chunks are CommonJS) to $LOADED_MODULES_FILE, one path a line.
const { writeFileSync } = require('node:fs');

process.on('exit', () => {
  writeFileSync(process.env.LOADED_MODULES_FILE, Object.keys(require.cache).join('\n'));
});
