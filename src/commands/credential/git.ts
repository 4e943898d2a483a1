/** `credential git get|store|erase`: git's credential helper, answering only for the origins the token belongs to. */
import type { Invocation } from '../../argv/define.js';
import { onTokenOrigin } from '../../apiclient/target.js';
import { openCredentials } from '../../oauth/credentials.js';
import { MIN_TTL_SEC } from '../../token-rules.js';
import { answer, parseAttributes, queryUrl } from './git-attributes.js';

export async function gitCredential(action: 'get' | 'store' | 'erase', invocation: Invocation): Promise<void> {
  // git keeps nothing of ours: the token lives in idcli's store, refreshed there.
  if (action === 'store') return;
  const input = await readAttributes(invocation.stdin());
  // Cut short at the cap, the last line may be a url= missing its `@host`: fail closed, as for another origin. An
  // exit 0 without an answer is what git gets for any origin not ours; a failure would tell git nothing more.
  if (!input.complete) return;
  const query = parseAttributes(input.text);
  const url = queryUrl(query);
  const ctx = await invocation.context();
  // Any other origin gets no answer, so git asks its next helper: the token never leaves its own origins.
  if (url === undefined || !onTokenOrigin(url, ctx.settings)) return;
  const credentials = await openCredentials(ctx);
  if (action === 'erase') {
    // erase acts only while the token git names is still the stored one: with none named, there is nothing to match.
    if (credentials.kind === 'stored' && query.rejected !== undefined) await credentials.session.expire(query.rejected);
    return;
  }
  if (credentials.kind === 'env') return ctx.deps.print(answer(query, credentials.token, credentials.expiresAt));
  const record = await credentials.session.valid(MIN_TTL_SEC);
  ctx.deps.print(answer(query, record.accessToken, record.expiresAt));
}

/** git's attributes are a few short lines; more than this is not git talking. */
const MAX_ATTRIBUTES_BYTES = 64 * 1024;

/**
 * stdin up to the first empty line, or its end: git may keep its end of the pipe open after the empty line.
 * `complete` is false when the cap came first, so the text may end inside a line.
 */
function readAttributes(stdin: NodeJS.ReadableStream): Promise<{ text: string; complete: boolean }> {
  return new Promise((resolve, reject) => {
    let text = '';
    stdin.setEncoding('utf8');
    const done = (complete: boolean): void => {
      stdin.off('data', onData).off('end', ended).off('error', reject);
      stdin.pause();
      resolve({ text, complete });
    };
    const ended = (): void => done(true);
    const onData = (chunk: Buffer | string): void => {
      text += chunk.toString();
      if (/(^|\n)\r?\n/.test(text)) done(true);
      else if (text.length > MAX_ATTRIBUTES_BYTES) done(false);
    };
    stdin.on('data', onData).on('end', ended).on('error', reject);
  });
}
