// `npm run bench`: every benchmark of the project. Today that is the `list` pipeline.
await import('./list.js');
