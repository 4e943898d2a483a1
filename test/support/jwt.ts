/** A JWT with these claims; idcli never checks a signature, so any bytes do for it. */
export function jwt(claims: unknown): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}.${Buffer.from('not-checked').toString('base64url')}`;
}
