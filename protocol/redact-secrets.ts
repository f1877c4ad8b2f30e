// Credentials masked out of any text bound for an error message or a log line: a URL's password
// (`scheme://user:password@host`), secret query or connection-string parameters (`password=…`,
// `?token=…`, libpq's `password='…'`) and HTTP credentials (`Bearer …`, `Basic …`). Pure and Worker-safe.
// It masks what is recognisably a secret; it leaves user names, hosts and paths, which a reader needs.

/** What a masked secret reads as. */
export const redactedMark = '***';

// `scheme://[user]:password@host`: the password runs to the last `@` of the token (greedy), so an
// unencoded `@` inside a password is masked too; over-masking a query that holds an `@` is the safe side.
const urlPassword = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:@/?#]*):\S*@(?=[^\s@]*(?:\s|$))/gi;
// The same, for the rare text where the host part is followed by another `@` (several URLs run together).
const urlPasswordFallback = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:@/?#]*):[^\s@]*@/gi;

// Parameter names that carry a secret in URLs (`?password=`), libpq keyword strings (`password=x`) and
// form bodies. libpq's own are `password` and `sslpassword` (postgresql.org/docs/current/libpq-connect.html).
const secretKeys = [
  'password',
  'passwd',
  'pwd',
  'sslpassword',
  'token',
  'access_token',
  'refresh_token',
  'api_key',
  'apikey',
  'secret',
  'client_secret',
];
const secretParameter = new RegExp(
  `(^|[?&;\\s,])(${secretKeys.join('|')})=('[^']*'|"[^"]*"|[^&;\\s,'"]*)`,
  'gi',
);

// RFC 6750 bearer tokens (b64token characters) and RFC 7617 Basic credentials.
const httpCredentials = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;

/** The text with every credential it recognises replaced by `***`. */
export function redactSecrets(text: string): string {
  return text
    .replace(urlPassword, `$1:${redactedMark}@`)
    .replace(urlPasswordFallback, `$1:${redactedMark}@`)
    .replace(secretParameter, `$1$2=${redactedMark}`)
    .replace(httpCredentials, `$1 ${redactedMark}`);
}
