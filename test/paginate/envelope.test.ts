import { describe, expect, it } from 'vitest';
import { IdcliError } from '../../src/errors.js';
import { parsePage } from '../../src/paginate/envelope.js';

const URL0 = 'http://127.0.0.1:1/v1/users?pageIndex=0&pageSize=2';
const links = '"links":{"self":{"href":"http://h/s"},"first":"http://h/f","next":{"href":"/v1/users?pageIndex=1"}}';

function fails(body: string | Buffer, pattern: RegExp): void {
  let caught: unknown;
  try {
    parsePage(typeof body === 'string' ? Buffer.from(body) : body, URL0);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(IdcliError);
  const e = caught as IdcliError;
  expect(e.exitCode).toBe(5);
  expect(e.code).toBe('CONTRACT_MALFORMED_PAGE');
  expect(e.message).toMatch(pattern);
  // The page is named in the error so the user knows where the server broke the contract.
  expect(e.message).toContain('http://127.0.0.1:1/v1/users?pageIndex=0&pageSize=2');
}

describe('parsePage', () => {
  it('reads an offset envelope with object and string links', () => {
    const page = parsePage(
      Buffer.from(`{"pageIndex":3,"totalItems":12345678901234567890,"items":[{"a":1}],${links}}`),
      URL0,
    );
    expect(page.pageIndex).toBe(3);
    expect(page.totalItems).toBe('12345678901234567890');
    expect(page.itemCount).toBe(1);
    expect(page.self).toBe('http://h/s');
    expect(page.first).toBe('http://h/f');
    expect(page.next).toBe('/v1/users?pageIndex=1');
  });

  it('reads a cursor envelope without totalItems or next', () => {
    const page = parsePage(Buffer.from('{"items":[],"links":{"self":"s","first":"f","prev":"p"}}'), URL0);
    expect(page.pageIndex).toBeUndefined();
    expect(page.totalItems).toBeUndefined();
    expect(page.next).toBeUndefined();
    expect(page.itemCount).toBe(0);
  });

  it.each([
    ['truncated JSON', '{"items":[{"a":1}', /invalid JSON/],
    ['HTML', '<html>oops</html>', /invalid JSON/],
    ['a JSON array', '[]', /not a JSON object/],
    ['items missing', `{${links}}`, /"items" is missing/],
    ['items not an array', `{"items":{},${links}}`, /"items" is not an array/],
    ['a non-object item', `{"items":[{},"x"],${links}}`, /items\[1\] is not a JSON object/],
    ['links missing', '{"items":[]}', /"links" is missing/],
    ['links not an object', '{"items":[],"links":[]}', /"links" is not an object/],
    ['self missing', '{"items":[],"links":{"first":"f"}}', /links\.self is missing/],
    ['first missing', '{"items":[],"links":{"self":"s"}}', /links\.first is missing/],
    ['next a number', '{"items":[],"links":{"self":"s","first":"f","next":42}}', /links\.next must be/],
    ['next null', '{"items":[],"links":{"self":"s","first":"f","next":null}}', /links\.next must be/],
    ['next without href', '{"items":[],"links":{"self":"s","first":"f","next":{"url":"x"}}}', /links\.next must be/],
    ['next empty', '{"items":[],"links":{"self":"s","first":"f","next":""}}', /links\.next must be/],
    ['pageIndex a string', `{"pageIndex":"1","items":[],${links}}`, /"pageIndex" is not a non-negative integer/],
    ['pageIndex negative', `{"pageIndex":-1,"items":[],${links}}`, /"pageIndex"/],
    ['totalItems fractional', `{"totalItems":2.5,"items":[],${links}}`, /"totalItems" is not a non-negative integer/],
    ['duplicate items', `{"items":[],"items":[{}],${links}}`, /"items" appears more than once/],
  ])('rejects %s with exit 5', (_name, body, pattern) => {
    fails(body, pattern);
  });

  it('rejects invalid UTF-8', () => {
    fails(
      Buffer.concat([Buffer.from('{"items":[{"s":"'), Buffer.from([0xc3, 0x28]), Buffer.from(`"}],${links}}`)]),
      /UTF-8/,
    );
  });
});
