/**
 * The defaults of every HTTP request that a setting or a flag may change. They sit below the settings table and the
 * option table, which offer them, and below http/, which applies them, so that none of these imports another.
 */

/** IDCLI_HTTP_TIMEOUT's default: the whole exchange, from sending the request to the answer's last byte. */
export const DEFAULT_HTTP_TIMEOUT_MS = 300_000;

/** --max-retries' default: the retries after a request's first attempt. */
export const DEFAULT_MAX_RETRIES = 5;

/** The most retries --max-retries takes: beyond it a run would wait on a failing server for hours. */
export const MAX_RETRIES = 100;
