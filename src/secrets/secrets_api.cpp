// The public secret API (include/quarry/secrets.h) over the encrypted store.
#include "quarry/secrets.h"

#include "core/util.h"
#include "secrets/secret_store.h"

namespace quarry {

bool valid_secret_name(std::string_view name) {
  return core::valid_secret_name(name);
}

void set_secret(const std::string& data_dir, const std::string& name, const std::string& value) {
  secrets::SecretStore(data_dir).set(name, value);
}

std::vector<std::string> secret_names(const std::string& data_dir) {
  return secrets::SecretStore(data_dir).names();
}

bool delete_secret(const std::string& data_dir, const std::string& name) {
  return secrets::SecretStore(data_dir).remove(name);
}

}  // namespace quarry
