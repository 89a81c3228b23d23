"""Every error `accounts` raises, in one tree, so that a caller can catch `ConfigError` alone.

    ConfigError                        profiles, the config file or a key cannot be used
    ├── ConfigFileError                config.toml unreadable, unwritable, or not this schema
    ├── InvalidValueError              a value the user gave is malformed
    │   ├── InvalidServerURLError
    │   ├── InvalidProfileNameError
    │   └── InvalidKeyError
    ├── ProfileError                   the profile asked for cannot be used
    │   ├── ProfileNotFoundError
    │   ├── ProfileExistsError
    │   ├── NoProfileError             no name, no default profile and no TRACKER_SERVER
    │   └── ProfileConflictError       TRACKER_SERVER names another server than the profile
    └── KeyStorageError                a key could not be stored, read or deleted
        ├── KeyringUnavailableError    no OS keyring; the message says how to proceed
        ├── KeyringTimeoutError        the keyring did not answer in time
        ├── KeyringBackendError        the keyring answered with an error (locked, denied)
        ├── KeyFileError               the plaintext key file is unusable or readable by others
        └── KeyNotKeptError            a login's key was refused by the keyring, no file allowed

No message ever contains a key: the errors are raised outside the `except` blocks that caught a
backend's (whose frames hold the key as a plain string), or with the key masked. A session that
finds no key at all is `sync`'s to report (`sync.errors.NoCredentials`): having no key is not
an error of the accounts, which then ask the user for one.
"""

from __future__ import annotations


class ConfigError(Exception):
    """Root of the tree drawn in the module docstring."""


class ConfigFileError(ConfigError):
    pass


class InvalidValueError(ConfigError):
    pass


class InvalidServerURLError(InvalidValueError):
    pass


class InvalidProfileNameError(InvalidValueError):
    pass


class InvalidKeyError(InvalidValueError):
    pass


class ProfileError(ConfigError):
    pass


class ProfileNotFoundError(ProfileError):
    pass


class ProfileExistsError(ProfileError):
    pass


class NoProfileError(ProfileError):
    pass


class ProfileConflictError(ProfileError):
    pass


class KeyStorageError(ConfigError):
    pass


class KeyringUnavailableError(KeyStorageError):
    pass


class KeyringTimeoutError(KeyStorageError):
    pass


class KeyringBackendError(KeyStorageError):
    pass


class KeyFileError(KeyStorageError):
    pass


class KeyNotKeptError(KeyStorageError):
    """The keyring refused a login's key and no plaintext file was allowed: nothing was saved."""
