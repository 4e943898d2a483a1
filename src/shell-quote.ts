/** Single-quotes a word for POSIX shells: the only character needing care inside '...' is ' itself. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}
