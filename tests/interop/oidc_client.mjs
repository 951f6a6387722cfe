// The official TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) as a machine client of
// baremcp behind an authorization server: ClientCredentialsProvider runs the OAuth client
// credentials grant by itself, from baremcp's 401 (its RFC 9728 metadata, then the
// provider's) to the token for baremcp's resource, then the client calls `hello`. Run by
// oidc.sh. The scope is given: for this grant the SDK asks for its configured scope, not the
// one baremcp's challenge names.
//
//   usage: node oidc_client.mjs URL ISSUER CLIENT_ID CLIENT_SECRET SCOPE
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, issuer, clientId, clientSecret, scope] = process.argv.slice(2);
const authProvider = new ClientCredentialsProvider({
  clientId, clientSecret, scope, expectedIssuer: issuer,
});
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
const client = new Client({ name: 'oidc-interop', version: '1.0.0' });
await client.connect(transport);
const result = await client.callTool({ name: 'hello', arguments: { name: 'World' } });
const text = result.content[0].text;
if (text !== 'Hello, World!') throw new Error(`hello answered ${JSON.stringify(result)}`);
const token = authProvider.tokens()?.access_token ?? '';
const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString() || '{}');
await client.close();
console.log(`typescript: ${text} (token for ${claims.aud}, scope ${claims.scope})`);
