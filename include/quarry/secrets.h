// Secrets at rest (SPEC §10): API keys and DSNs that configs name (`api_key_secret`, a pump
// source's DSN), stored encrypted in the data directory. A value is written and deleted here but
// never listed or returned: the library reads it only where a provider or source needs it. See
// docs/configuration.md for the master key (the key file, or QUARRY_SECRET_KEY).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace quarry {

// Names look like environment variables, [A-Za-z_][A-Za-z0-9_]{0,63}, so a secret falls back to
// the variable of the same name when the store has none.
bool valid_secret_name(std::string_view name);

// Encrypts and stores `value` under `name` (replacing an older one); creates the data directory
// and its key when missing. Errors: invalid_argument (name, empty value), forbidden (a key file
// others can read), unauthorized (the master key changed), io_error.
void set_secret(const std::string& data_dir, const std::string& name, const std::string& value);

// The names stored, sorted; never the values.
std::vector<std::string> secret_names(const std::string& data_dir);

// True when a secret of that name existed and is gone now.
bool delete_secret(const std::string& data_dir, const std::string& name);

}  // namespace quarry
