/**
 * The raw-transfer floor of the budgets: a plain Node loop that downloads the same pages through a keep-alive
 * node:http Agent, as idcli's direct transport does, and discards them. No parsing, no output.
 * Usage: node floor.mjs <collection-url> <totalItems> <pageSize>
 * Bundled to plain JS by the bench so it starts exactly like the built CLI (no TypeScript loader).
 */
import { Agent, get } from 'node:http';

const [url, totalArg, sizeArg] = process.argv.slice(2);
const total = Number(totalArg);
const pageSize = Number(sizeArg);
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function fetchPage(index: number): Promise<number> {
  return new Promise((resolve, reject) => {
    get(
      `${url}?pageIndex=${index}&pageSize=${pageSize}`,
      { agent, headers: { authorization: 'Bearer bench' } },
      (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
        });
        res.on('end', () => resolve(bytes));
        res.on('error', reject);
      },
    ).on('error', reject);
  });
}

let bytes = 0;
const pages = Math.max(1, Math.ceil(total / pageSize));
for (let i = 0; i < pages; i++) bytes += await fetchPage(i);
agent.destroy();
if (bytes === 0) process.exitCode = 1;
