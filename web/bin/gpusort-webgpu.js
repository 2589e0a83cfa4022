#!/usr/bin/env node
// The package's command: see src/cli.js or `gpusort-webgpu --help`.
import { main } from '../src/cli.js';

const status = await main(process.argv.slice(2));
// Dawn's device may keep the event loop alive: leave once the outputs are written.
process.exit(status);
