// The machine's clock, the emulator's default for its waits (EmulatorOptions.clock).
import type { EmulatorClock } from './types.js';

export const machineClock: EmulatorClock = {
  now: () => performance.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    return { clear: () => clearTimeout(t) };
  },
};
