/**
 * Text from servers (error descriptions, header values, ID token claims) and from links may carry terminal control
 * sequences: ESC (C0) or CSI (C1) can rewrite the screen, retitle the window or hide what follows. Anything shown
 * on a terminal passes through here first.
 */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** The text without C0 and C1 control characters (DEL included). */
export function printable(text: string): string {
  return text.replace(CONTROLS, '');
}

/** The most characters of a URL or a server's string echoed in one message or trace. */
export const MAX_ECHO = 200;

/** `text` cut to `max` characters, the cut marked with an ellipsis. */
export function clip(text: string, max = MAX_ECHO): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A value from the user or a file, quoted for a message and cut to MAX_ECHO characters: an argument can be 128 KiB. */
export function quoted(text: string): string {
  return `'${clip(text)}'`;
}
