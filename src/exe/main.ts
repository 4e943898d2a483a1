/** The entry of the single executable (scripts/build-exe.mjs), run as bin/idcli.cjs runs it for the npm package. */
import { run } from '../cli.js';

run();
