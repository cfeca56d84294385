// Secrets at rest (SPEC §10): API keys and DSNs, encrypted with libsodium's crypto_secretbox
// (XSalsa20-Poly1305) under a master key that never sits next to them in the same file.
//
//   <data_dir>/secrets.json   {"version":1,"secrets":{NAME:{"nonce":b64,"ciphertext":b64}}}
//   <data_dir>/secret.key     32 random bytes, mode 0600 (created on the first set())
//
// QUARRY_SECRET_KEY (64 hex digits or base64 of 32 bytes), when set, is the master key instead
// of the file (for containers, where the key comes from the orchestrator). Each plaintext is
// bound to its name, so swapping ciphertexts between names in the file is detected.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quarry::secrets {

class SecretStore {
 public:
  explicit SecretStore(std::string data_dir);

  // Names: [A-Za-z_][A-Za-z0-9_]{0,63} (the shape of an environment variable, so the env
  // fallback can use the same name). Otherwise Error(invalid_argument).
  static bool valid_name(std::string_view name);

  // Encrypts and stores (replacing any previous value). Creates the data directory (0700) and
  // the key file when missing. Errors: invalid_argument (name, empty value), forbidden (key
  // file readable by group/other), io_error.
  void set(const std::string& name, const std::string& value);

  // nullopt when no such secret. Throws Error(unauthorized) when the stored value does not
  // decrypt under the current master key (the key changed), corrupt_input for a damaged file.
  std::optional<std::string> get(const std::string& name) const;

  // True when something was removed.
  bool remove(const std::string& name);

  // Sorted names; values are never listed.
  std::vector<std::string> names() const;

  const std::string& data_dir() const { return dir_; }

 private:
  std::string dir_;
};

// The lookup behind ProviderContext::secret: the store's value when it has one, else the
// environment variable of the same name, else "". Errors of the store (wrong master key) are
// thrown, not hidden behind the environment: a silently different key is worse than a clear
// error.
std::string lookup_secret(const SecretStore& store, const std::string& name);

// lookup_secret bound to a data directory, in the shape ProviderContext::secret expects.
std::function<std::string(const std::string&)> secret_lookup(const std::string& data_dir);

}  // namespace quarry::secrets
