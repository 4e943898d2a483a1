/** ~200-byte user-like items as raw JSON text, deterministic so every run serves the same bytes. */
export function benchItems(count: number): string[] {
  const items: string[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const n = String(i).padStart(7, '0');
    items[i] =
      `{"id":"u${n}","email":"user${n}@example.com","name":"User Number ${n}","createdAt":"2024-01-01T00:00:00.000Z",` +
      `"active":${i % 3 !== 0},"score":${(i * 7919) % 100_000},"tags":["alpha","beta"],"note":"lorem ipsum dolor sit amet"}`;
  }
  return items;
}
