/**
 * Just enough of a terminal to read what a person would see from raw pseudo-terminal output: printable text,
 * \r, \n, "erase line" (ESC[2K) and "erase to end of line" (ESC[K); colour codes are dropped. Lines never wrap,
 * so a line longer than the width shows up as such in the result.
 */
export function screen(raw: string): string[] {
  const lines: string[] = [''];
  let row = 0;
  let col = 0;
  const text = raw.replace(/\x1b\[[0-9;]*m/g, '');
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\x1b') {
      const m = /^\x1b\[([0-9]*)([A-Za-z])/.exec(text.slice(i));
      if (!m) throw new Error(`unexpected escape sequence at ${JSON.stringify(text.slice(i, i + 8))}`);
      const [seq, arg, cmd] = m;
      if (cmd === 'K' && (arg === '' || arg === '0')) lines[row] = lines[row]!.slice(0, col);
      else if (cmd === 'K' && arg === '2') lines[row] = '';
      else throw new Error(`unexpected escape sequence ${JSON.stringify(seq)}`);
      i += seq!.length - 1;
    } else if (ch === '\r') {
      col = 0;
    } else if (ch === '\n') {
      row++;
      col = 0;
      lines[row] ??= '';
    } else {
      const line = lines[row]!.padEnd(col);
      lines[row] = line.slice(0, col) + ch + line.slice(col + 1);
      col++;
    }
  }
  return lines;
}

/** Every state the cursor's row went through: the text on it each time it was redrawn from its start. */
export function frames(raw: string): string[] {
  const out: string[] = [];
  for (const part of raw.replace(/\x1b\[[0-9;]*m/g, '').split(/\r(?!\n)/)) {
    const text = part.replace(/\x1b\[2?K/g, '');
    if (text !== '' && !text.includes('\n')) out.push(text);
  }
  return out;
}
