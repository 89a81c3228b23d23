"""Accounts: which server and workspace to talk to, and the API key to talk with.

Modules, one job each: `profiles` (config.toml and its profiles), `keystore` (the OS keyring
and the plaintext key files a user may choose), `credentials` (finding, storing and forgetting
a profile's key; resolving what a run uses), `doctor` (where all of it is, and why, for
`tracker-tui doctor` and the login screen), `secret` (the masked type every key travels in,
and files only their owner can read), `errors` (the one tree of this package's errors).

The sync engine needs a profile and its key to open a session, so `sync` imports this
package; this package imports neither `sync` nor the UI, so the CLI can manage accounts, and a
test can check them, without either.
"""
