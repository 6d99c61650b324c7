// A device's signing key is part of the public API (a custom `DeviceKeyStore` stores it): it is
// re-exported, so that an app needs no `import Sodium`, a module that is not a product.
@_exported import struct Sodium.SigningKey
