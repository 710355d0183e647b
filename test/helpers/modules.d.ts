// oidc-provider ships no types; the test helper uses a small part of it.
declare module 'oidc-provider'
