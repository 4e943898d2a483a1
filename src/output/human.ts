/** Thousands separators without Intl: creating a NumberFormat costs ICU start-up time in every `list` run. */
export function group(n: number | bigint | string): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export const itemCount = (n: number): string => `${n} ${n === 1 ? 'item' : 'items'}`;

/** 870, 8.7k, 87k, 1.2M: three significant figures at most, so the line does not jitter. */
export function compact(n: number): string {
  const units: Array<[number, string]> = [
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [size, unit] of units) {
    if (n >= size) {
      const v = n / size;
      return `${v < 10 ? (Math.floor(v * 10) / 10).toFixed(1) : Math.floor(v)}${unit}`;
    }
  }
  return String(Math.floor(n));
}
