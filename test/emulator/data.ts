// Deterministic default data, so walks over the default collections are reproducible.

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** The lists made so far, by kind and count: every emulator serves the same defaults. */
const made = new Map<string, readonly string[]>();

function memo(key: string, make: () => string[]): string[] {
  let items = made.get(key);
  if (!items) made.set(key, (items = make()));
  return items.slice();
}

export function generateUsers(count: number): string[] {
  const width = Math.max(4, String(count).length);
  return memo(`users ${count}`, () =>
    Array.from({ length: count }, (_, i) => {
      const id = pad(i + 1, width);
      return `{"id":"u${id}","email":"user${id}@example.com","name":"User ${id}"}`;
    }),
  );
}

const EVENT_TYPES = ['user.created', 'user.signed_in', 'user.updated', 'token.refreshed', 'user.signed_out'];
const EPOCH = Date.UTC(2025, 0, 1);

export function generateEvents(count: number): string[] {
  const width = Math.max(4, String(count).length);
  return memo(`events ${count}`, () =>
    Array.from({ length: count }, (_, i) => {
      const type = EVENT_TYPES[i % EVENT_TYPES.length] as string;
      const at = new Date(EPOCH + i * 60_000).toISOString();
      return `{"id":"e${pad(i + 1, width)}","type":"${type}","userId":"u${pad((i % 250) + 1, 4)}","at":"${at}"}`;
    }),
  );
}
