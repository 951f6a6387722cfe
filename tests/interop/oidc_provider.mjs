// A real authorization server for baremcp's JWKS path: npm oidc-provider (a certified
// OpenID provider) on loopback, issuing JWT access tokens by the client-credentials grant
// for RFC 8707 resource indicators. oidc.sh installs it and runs this; see there for usage.
//
//   serve [--alg RS256|PS256|ES256|EdDSA] [--port N]
//       Serves until killed. Prints `issuer URL` when listening. `POST /test/rotate` (the one
//       path that is not the provider's) makes new signing keys and answers their kids.
//   jwks ISSUER FILE          the provider's JWKS (jwks_uri of its discovery document)
//                             written to FILE through a temporary file and a rename
//   token ISSUER RESOURCE [SCOPE]
//                             an access token for RESOURCE, printed
//   rotate ISSUER             new signing keys; the next jwks shows them
//   check DIR                 for each algorithm: serve, write the JWKS, mint a token for
//                             a resource and one for another, rotate, mint again; writes
//                             DIR/check-ALG.json for the Rust check (see oidc.sh)
import { createServer } from 'node:http';
import { renameSync, writeFileSync } from 'node:fs';
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';

const CLIENT_ID = 'baremcp-interop';
const CLIENT_SECRET = 'baremcp-interop-secret';
const SCOPES = 'mcp:tools mcp:admin';

/// Signing keys: one of the algorithm's type first (the provider signs with the first that
/// fits), and an RSA key, which the provider wants for ID tokens whatever the access tokens use.
async function signingKeys(alg, generation) {
  const make = async (name, options, kid) => {
    const { privateKey } = await generateKeyPair(name, { extractable: true, ...options });
    return { ...(await exportJWK(privateKey)), kid, use: 'sig' };
  };
  const keys = [];
  if (alg === 'ES256') keys.push(await make('ES256', {}, `es256-${generation}`));
  if (alg === 'EdDSA') keys.push(await make('EdDSA', { crv: 'Ed25519' }, `ed25519-${generation}`));
  keys.push(await make('RS256', {}, `rsa-${generation}`));
  return keys;
}

function provider(issuer, alg, keys) {
  return new Provider(issuer, {
    clients: [{
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: SCOPES,
    }],
    jwks: { keys },
    scopes: ['openid', ...SCOPES.split(' ')],
    ttl: { ClientCredentials: 600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // Any absolute http(s) URL names a resource server whose audience is that URL, as an
        // MCP server's canonical URI is (RFC 8707, MCP authorization).
        getResourceServerInfo(_ctx, resource) {
          if (!/^https?:\/\//.test(resource)) throw new Error(`not a resource: ${resource}`);
          return {
            scope: SCOPES,
            audience: resource,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg } },
          };
        },
      },
    },
  });
}

/// Serves on 127.0.0.1; resolves to the issuer and a function that rotates the keys.
async function serve(alg, port) {
  const server = createServer();
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  let generation = 1;
  let current = provider(issuer, alg, await signingKeys(alg, generation));
  const rotate = async () => {
    generation += 1;
    const keys = await signingKeys(alg, generation);
    current = provider(issuer, alg, keys);
    return keys.map((k) => k.kid);
  };
  server.on('request', async (req, res) => {
    if (req.method === 'POST' && req.url === '/test/rotate') {
      const kids = await rotate();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kids }));
      return;
    }
    current.callback()(req, res);
  });
  return { issuer, server };
}

async function jwks(issuer, file) {
  const discovery = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  const text = await (await fetch(discovery.jwks_uri)).text();
  JSON.parse(text);
  // As an operator's cron does it: never a half-written file under the name baremcp reads.
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

async function token(issuer, resource, scope = 'mcp:tools') {
  const discovery = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  const basic = Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64');
  const response = await fetch(discovery.token_endpoint, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`token endpoint: ${response.status} ${JSON.stringify(body)}`);
  if (body.access_token.split('.').length !== 3) throw new Error('the access token is not a JWT');
  return body.access_token;
}

async function rotate(issuer) {
  const response = await fetch(`${issuer}/test/rotate`, { method: 'POST' });
  return (await response.json()).kids;
}

/// One algorithm's run, written as the cases the Rust check verifies (oidc.sh).
async function check(dir, alg) {
  const { issuer, server } = await serve(alg, 0);
  try {
    const resource = 'http://127.0.0.1:8000/mcp';
    await jwks(issuer, `${dir}/jwks-${alg}-1.json`);
    const before = await token(issuer, resource, 'mcp:tools mcp:admin');
    const elsewhere = await token(issuer, 'http://127.0.0.1:8000/other');
    await rotate(issuer);
    await jwks(issuer, `${dir}/jwks-${alg}-2.json`);
    const after = await token(issuer, resource);
    const cases = {
      alg, issuer, audience: resource, client_id: CLIENT_ID,
      phases: [
        { jwks: `${dir}/jwks-${alg}-1.json`, accept: [[before, 'mcp:tools mcp:admin']],
          refuse: [[elsewhere, 'token audience is not this server'], [after, 'names no key']] },
        { jwks: `${dir}/jwks-${alg}-2.json`, accept: [[after, 'mcp:tools']],
          refuse: [[before, 'names no key'], [elsewhere, 'names no key']] },
      ],
    };
    writeFileSync(`${dir}/check-${alg}.json`, JSON.stringify(cases, null, 2));
    console.log(`${alg}: tokens from ${issuer} written to ${dir}/check-${alg}.json`);
  } finally {
    server.close();
  }
}

const [command, ...args] = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
switch (command) {
  case 'serve': {
    const { issuer } = await serve(flag('--alg', 'RS256'), Number(flag('--port', '0')));
    console.log(`issuer ${issuer}`);
    break;
  }
  case 'jwks': await jwks(args[0], args[1]); break;
  case 'token': console.log(await token(args[0], args[1], args[2])); break;
  case 'rotate': console.log((await rotate(args[0])).join(' ')); break;
  case 'check':
    for (const alg of ['RS256', 'PS256', 'ES256', 'EdDSA']) await check(args[0], alg);
    break;
  default:
    console.error('usage: oidc_provider.mjs serve|jwks|token|rotate|check ... (see its head)');
    process.exit(2);
}
