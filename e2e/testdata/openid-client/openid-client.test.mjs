// openid-client (v6, https://github.com/panva/openid-client), unchanged,
// against a running FRIS gateway. TestCompatOpenIDClient starts the stack
// and runs this file with `node --test`; node_modules is vendored, so no
// network is needed. The environment names the stack:
//   FRIS_GATEWAY_URL  where the gateway listens (http://127.0.0.1:port)
//   FRIS_ISSUER       the public issuer URL (the tokens' iss), which
//                     resolves to nothing: requests to it go to the gateway
//   FRIS_CLIENT_ID, FRIS_CLIENT_SECRET, FRIS_CALLBACK   a registered client
//   FRIS_USER_EMAIL, FRIS_USER_PASSWORD                a user with a password
import { test } from 'node:test'
import assert from 'node:assert/strict'
import * as client from 'openid-client'

const env = (name) => {
  const v = process.env[name]
  if (!v) throw new Error(`${name} is not set: run this through TestCompatOpenIDClient`)
  return v
}
const GATEWAY = env('FRIS_GATEWAY_URL')
const ISSUER = env('FRIS_ISSUER')
const CLIENT_ID = env('FRIS_CLIENT_ID')
const CLIENT_SECRET = env('FRIS_CLIENT_SECRET')
const CALLBACK = env('FRIS_CALLBACK')
const EMAIL = env('FRIS_USER_EMAIL')
const PASSWORD = env('FRIS_USER_PASSWORD')

// toGateway sends a request for the issuer's URL to the gateway, as DNS
// would in a deployment.
const toGateway = (url) => {
  const u = String(url)
  return u.startsWith(ISSUER) ? GATEWAY + u.slice(ISSUER.length) : u
}
const viaGateway = (url, options) => fetch(toGateway(url), options)

async function discover (auth) {
  const config = await client.discovery(new URL(ISSUER), CLIENT_ID, { client_secret: CLIENT_SECRET }, auth, {
    [client.customFetch]: viaGateway,
    execute: [client.allowInsecureRequests]
  })
  config[client.customFetch] = viaGateway
  return config
}

const unescapeHTML = (s) => s.replace(/&(#34|#39|quot|amp|lt|gt);/g, (_, e) =>
  ({ '#34': '"', '#39': "'", quot: '"', amp: '&', lt: '<', gt: '>' })[e])

// signIn is the user's browser: it opens the authorization URL, fills the
// login form (hidden fields and CSRF cookie included) and returns the URL
// the gateway redirects back to.
async function signIn (authorizationURL) {
  const page = await fetch(toGateway(authorizationURL), { redirect: 'manual' })
  assert.equal(page.status, 200, 'login page')
  const html = await page.text()
  const form = new URLSearchParams()
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    form.set(m[1], unescapeHTML(m[2]))
  }
  assert.ok(form.get('csrf_token'), 'the page carries a CSRF token')
  form.set('email', EMAIL)
  form.set('password', PASSWORD)
  const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
  const action = new URL(authorizationURL).pathname
  const res = await fetch(GATEWAY + action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, 'sec-fetch-site': 'same-origin' },
    body: form
  })
  assert.equal(res.status, 302, `login answered ${res.status}: ${await res.text()}`)
  const location = new URL(res.headers.get('location'))
  assert.equal(location.origin + location.pathname, CALLBACK)
  return location
}

test('discovery', async () => {
  const config = await discover(client.ClientSecretBasic(CLIENT_SECRET))
  const md = config.serverMetadata()
  assert.equal(md.issuer, ISSUER)
  assert.ok(md.token_endpoint_auth_methods_supported.includes('client_secret_basic'))
  assert.ok(md.token_endpoint_auth_methods_supported.includes('client_secret_post'))
  assert.ok(md.grant_types_supported.includes('refresh_token'))
  assert.ok(md.code_challenge_methods_supported.includes('S256'))
})

test('code flow with PKCE and nonce, client_secret_basic, userinfo, refresh', async () => {
  const config = await discover(client.ClientSecretBasic(CLIENT_SECRET))
  const pkceCodeVerifier = client.randomPKCECodeVerifier()
  const nonce = client.randomNonce()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope: 'openid email profile',
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    nonce,
    state
  })
  const tokens = await client.authorizationCodeGrant(config, await signIn(url), {
    pkceCodeVerifier,
    expectedNonce: nonce,
    expectedState: state,
    idTokenExpected: true
  })
  assert.equal(tokens.token_type.toLowerCase(), 'bearer')
  assert.equal(typeof tokens.expires_in, 'number')
  assert.ok(tokens.expiresIn() > 0)
  const claims = tokens.claims()
  assert.equal(claims.nonce, nonce)
  assert.deepEqual([].concat(claims.aud), [CLIENT_ID])
  assert.equal(claims.email, EMAIL)

  // userinfo checks that its sub is the id token's.
  const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub)
  assert.equal(info.sub, claims.sub)
  assert.equal(info.email, EMAIL)
  assert.ok(info.name)

  // Refresh (the client authenticates with Basic again); the refresh
  // token rotates and the new access token works.
  const next = await client.refreshTokenGrant(config, tokens.refresh_token)
  assert.notEqual(next.access_token, tokens.access_token)
  assert.ok(next.refresh_token && next.refresh_token !== tokens.refresh_token)
  assert.equal(next.claims()?.sub ?? claims.sub, claims.sub)
  const again = await client.fetchUserInfo(config, next.access_token, claims.sub)
  assert.equal(again.sub, claims.sub)

  // The spent refresh token is refused.
  await assert.rejects(client.refreshTokenGrant(config, tokens.refresh_token))
})

test('code flow without nonce, client_secret_post: the id token carries none', async () => {
  const config = await discover(client.ClientSecretPost(CLIENT_SECRET))
  const pkceCodeVerifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope: 'openid',
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    state
  })
  // openid-client refuses an id token with a nonce it did not send.
  const tokens = await client.authorizationCodeGrant(config, await signIn(url), { pkceCodeVerifier, expectedState: state })
  assert.equal(tokens.claims().nonce, undefined)
})

test('a wrong client secret is refused on refresh', async () => {
  const config = await discover(client.ClientSecretBasic(CLIENT_SECRET))
  const pkceCodeVerifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: CALLBACK,
    scope: 'openid',
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    state
  })
  const tokens = await client.authorizationCodeGrant(config, await signIn(url), { pkceCodeVerifier, expectedState: state })
  const wrong = await discover(client.ClientSecretBasic('wrong-wrong-wrong'))
  const err = await client.refreshTokenGrant(wrong, tokens.refresh_token).then(() => null, (e) => e)
  assert.ok(err, 'a refresh with a wrong secret was accepted')
  assert.equal(err.status, 401)
  // The 401 carries the Basic challenge RFC 6749 5.2 asks for, so the
  // library reports the challenge; the body says invalid_client.
  if (err instanceof client.WWWAuthenticateChallengeError) {
    assert.equal(err.cause[0].scheme, 'basic')
    assert.equal((await err.response.json()).error, 'invalid_client')
  } else {
    assert.equal(err.error, 'invalid_client')
  }
  // The refused request did not spend the refresh token.
  await client.refreshTokenGrant(config, tokens.refresh_token)
})

test('client_credentials', async () => {
  const config = await discover(client.ClientSecretBasic(CLIENT_SECRET))
  const tokens = await client.clientCredentialsGrant(config)
  assert.ok(tokens.access_token)
  assert.equal(tokens.refresh_token, undefined)
  assert.equal(tokens.id_token, undefined)
  assert.ok(tokens.expiresIn() > 0)
})
