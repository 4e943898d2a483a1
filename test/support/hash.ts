import { createHash } from 'node:crypto';

/** The SHA-256 of `data` in hex: compares large outputs without printing them when they differ. */
export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The SHA-256 of `items` as NDJSON, one line each, without building the whole text. */
export function sha256Ndjson(items: readonly string[]): string {
  const digest = createHash('sha256');
  // Each item and its newline apart: an item of many MB is not copied into a new string first.
  for (const item of items) digest.update(item).update('\n');
  return digest.digest('hex');
}
