#include "secrets/secret_store.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/layout.h"
#include "core/util.h"
#include "quarry/error.h"

namespace quarry::secrets {
namespace {

using nlohmann::json;
using Key = std::array<unsigned char, crypto_secretbox_KEYBYTES>;

// Wipes the key when it goes out of scope, so it does not linger in freed memory.
struct KeyHolder {
  Key key{};
  ~KeyHolder() { sodium_memzero(key.data(), key.size()); }
};

void sodium_once() {
  static const int rc = sodium_init();
  if (rc < 0) throw Error(Code::internal, "libsodium failed to initialise");
}

[[noreturn]] void io_fail(const std::string& what, const std::string& path) {
  throw Error(Code::io_error, what + " " + path + ": " + std::strerror(errno), {{"path", path}});
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string b64(const unsigned char* p, std::size_t n) {
  std::string out(sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), p, n, sodium_base64_VARIANT_ORIGINAL);
  out.resize(std::strlen(out.c_str()));
  return out;
}

bool unb64(const std::string& s, std::vector<unsigned char>& out, int variant) {
  out.assign(s.size(), 0);
  std::size_t len = 0;
  if (sodium_base642bin(out.data(), out.size(), s.data(), s.size(), nullptr, &len, nullptr,
                        variant) != 0)
    return false;
  out.resize(len);
  return true;
}

void write_all(int fd, const std::string& bytes, const std::string& path) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) io_fail("cannot write", path);
    off += static_cast<std::size_t>(n);
  }
}

// temp + fsync + rename + fsync(dir): readers see the old file or the new one, never half.
void atomic_write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::string path = dir + "/" + name;
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (fd.get() < 0) io_fail("cannot create", tmp);
    write_all(fd.get(), bytes, tmp);
    if (::fsync(fd.get()) != 0) io_fail("cannot fsync", tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) io_fail("cannot rename onto", path);
  Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.get() >= 0) ::fsync(d.get());
}

bool key_from_env(Key& key) {
  const char* env = std::getenv("QUARRY_SECRET_KEY");
  if (!env || !*env) return false;
  std::string v = env;
  std::size_t len = 0;
  if (v.size() == 2 * key.size() &&
      sodium_hex2bin(key.data(), key.size(), v.data(), v.size(), nullptr, &len, nullptr) == 0 &&
      len == key.size())
    return true;
  std::vector<unsigned char> raw;
  for (int variant : {sodium_base64_VARIANT_ORIGINAL, sodium_base64_VARIANT_ORIGINAL_NO_PADDING,
                      sodium_base64_VARIANT_URLSAFE, sodium_base64_VARIANT_URLSAFE_NO_PADDING}) {
    if (unb64(v, raw, variant) && raw.size() == key.size()) {
      std::memcpy(key.data(), raw.data(), key.size());
      sodium_memzero(raw.data(), raw.size());
      return true;
    }
  }
  throw Error(Code::invalid_argument,
              "QUARRY_SECRET_KEY must be 64 hex digits or the base64 of 32 bytes "
              "(make one with: head -c32 /dev/urandom | base64)");
}

// Reads the master key; creates the key file when `create` and it is missing. False when there
// is no key and `create` is false.
bool load_key(const std::string& dir, bool create, Key& key) {
  if (key_from_env(key)) return true;
  std::string path = core::Layout{dir}.secret_key_path();
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) {
    if (errno != ENOENT) io_fail("cannot open", path);
    if (!create) return false;
    randombytes_buf(key.data(), key.size());
    Fd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (out.get() < 0) {
      if (errno == EEXIST) return load_key(dir, false, key);  // another process won the race
      io_fail("cannot create", path);
    }
    write_all(out.get(), std::string(key.begin(), key.end()), path);
    if (::fsync(out.get()) != 0) io_fail("cannot fsync", path);
    return true;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) io_fail("cannot stat", path);
  if ((st.st_mode & 077) != 0)
    throw Error(Code::forbidden,
                path + " is readable by other users; run `chmod 600 " + path +
                    "` (and consider the stored secrets exposed)",
                {{"path", path}});
  ssize_t n = ::read(fd.get(), key.data(), key.size());
  char extra = 0;
  if (n != static_cast<ssize_t>(key.size()) || ::read(fd.get(), &extra, 1) != 0)
    throw Error(Code::corrupt_input,
                path +
                    " is not a 32-byte key; restore it from a backup, or delete it and set "
                    "every secret again",
                {{"path", path}});
  return true;
}

// Holds an exclusive flock for a read-modify-write, so two `quarry secret set` runs do not lose
// each other's update.
class WriteLock {
 public:
  explicit WriteLock(const std::string& dir)
      : fd_(::open(core::Layout{dir}.secrets_lock_path().c_str(), O_RDWR | O_CREAT | O_CLOEXEC,
                   0600)) {
    if (fd_.get() < 0) io_fail("cannot open", core::Layout{dir}.secrets_lock_path());
    while (::flock(fd_.get(), LOCK_EX) != 0)
      if (errno != EINTR) io_fail("cannot lock", core::Layout{dir}.secrets_lock_path());
  }

 private:
  Fd fd_;
};

json load_file(const std::string& dir) {
  std::string path = core::Layout{dir}.secrets_path();
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) {
    if (errno == ENOENT) return json{{"version", 1}, {"secrets", json::object()}};
    io_fail("cannot open", path);
  }
  std::string bytes;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) io_fail("cannot read", path);
    bytes.append(buf, static_cast<std::size_t>(n));
  }
  json j = json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("secrets") || !j["secrets"].is_object())
    throw Error(Code::corrupt_input, path + " is damaged; restore it from a backup",
                {{"path", path}});
  return j;
}

void check_name(const std::string& name) {
  if (!SecretStore::valid_name(name))
    throw Error(Code::invalid_argument,
                "invalid secret name '" + name +
                    "': use letters, digits and '_', not starting with a digit, at most 64 "
                    "characters (e.g. OPENAI_API_KEY)",
                {{"field", "name"}});
}

}  // namespace

SecretStore::SecretStore(std::string data_dir) : dir_(std::move(data_dir)) {
  sodium_once();
}

bool SecretStore::valid_name(std::string_view n) {
  return core::valid_secret_name(n);
}

void SecretStore::set(const std::string& name, const std::string& value) {
  check_name(name);
  if (value.empty())
    throw Error(Code::invalid_argument, "secret " + name + " is empty; give a value on stdin",
                {{"field", "value"}});
  std::error_code ec;
  if (std::filesystem::create_directories(dir_, ec))
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all, ec);
  if (!std::filesystem::is_directory(dir_))
    throw Error(Code::io_error, "cannot create the data directory " + dir_, {{"path", dir_}});
  WriteLock lock(dir_);
  KeyHolder k;
  load_key(dir_, true, k.key);
  json file = load_file(dir_);

  // The name travels inside the ciphertext: a value moved to another name will not open.
  std::string plain = name;
  plain.push_back('\0');
  plain += value;
  std::array<unsigned char, crypto_secretbox_NONCEBYTES> nonce{};
  randombytes_buf(nonce.data(), nonce.size());
  std::vector<unsigned char> cipher(plain.size() + crypto_secretbox_MACBYTES);
  crypto_secretbox_easy(cipher.data(), reinterpret_cast<const unsigned char*>(plain.data()),
                        plain.size(), nonce.data(), k.key.data());
  sodium_memzero(plain.data(), plain.size());
  file["version"] = 1;
  file["secrets"][name] = {{"nonce", b64(nonce.data(), nonce.size())},
                           {"ciphertext", b64(cipher.data(), cipher.size())}};
  atomic_write(dir_, core::Layout{dir_}.secrets_file(), file.dump(2) + "\n");
}

std::optional<std::string> SecretStore::get(const std::string& name) const {
  check_name(name);
  json file = load_file(dir_);
  auto& secrets = file["secrets"];
  if (!secrets.contains(name)) return std::nullopt;
  const json& e = secrets[name];
  std::vector<unsigned char> nonce, cipher;
  if (!e.is_object() || !e.value("nonce", json()).is_string() ||
      !e.value("ciphertext", json()).is_string() ||
      !unb64(e["nonce"].get<std::string>(), nonce, sodium_base64_VARIANT_ORIGINAL) ||
      !unb64(e["ciphertext"].get<std::string>(), cipher, sodium_base64_VARIANT_ORIGINAL) ||
      nonce.size() != crypto_secretbox_NONCEBYTES || cipher.size() < crypto_secretbox_MACBYTES)
    throw Error(Code::corrupt_input,
                "secret " + name + " is damaged in " + core::Layout{dir_}.secrets_path() +
                    "; set it again with `quarry secret set " + name + "`",
                {{"name", name}});
  KeyHolder k;
  std::string again = "; set it again with `quarry secret set " + name + "`";
  if (!load_key(dir_, false, k.key))
    throw Error(Code::unauthorized,
                "cannot decrypt secret " + name + ": " + core::Layout{dir_}.secret_key_path() +
                    " is missing and QUARRY_SECRET_KEY is not set" + again,
                {{"name", name}});
  std::string plain(cipher.size() - crypto_secretbox_MACBYTES, '\0');
  bool opened =
      crypto_secretbox_open_easy(reinterpret_cast<unsigned char*>(plain.data()), cipher.data(),
                                 cipher.size(), nonce.data(), k.key.data()) == 0;
  std::string prefix = name + std::string(1, '\0');
  if (!opened || plain.compare(0, prefix.size(), prefix) != 0) {
    sodium_memzero(plain.data(), plain.size());
    throw Error(Code::unauthorized,
                "cannot decrypt secret " + name +
                    ": the master key (QUARRY_SECRET_KEY or secret.key) is not the one it was "
                    "stored with" +
                    again,
                {{"name", name}});
  }
  std::string value = plain.substr(prefix.size());
  sodium_memzero(plain.data(), plain.size());
  return value;
}

bool SecretStore::remove(const std::string& name) {
  check_name(name);
  if (!std::filesystem::exists(core::Layout{dir_}.secrets_path())) return false;
  WriteLock lock(dir_);
  json file = load_file(dir_);
  if (file["secrets"].erase(name) == 0) return false;
  atomic_write(dir_, core::Layout{dir_}.secrets_file(), file.dump(2) + "\n");
  return true;
}

std::vector<std::string> SecretStore::names() const {
  std::vector<std::string> out;
  const json file = load_file(dir_);  // named: a temporary would die before the loop runs
  for (const auto& [k, v] : file["secrets"].items()) out.push_back(k);
  return out;  // nlohmann's object is a std::map: already sorted
}

std::string lookup_secret(const SecretStore& store, const std::string& name) {
  if (!SecretStore::valid_name(name)) return "";
  if (auto v = store.get(name)) return *v;
  const char* env = std::getenv(name.c_str());
  return env ? env : "";
}

std::function<std::string(const std::string&)> secret_lookup(const std::string& data_dir) {
  return [store = SecretStore(data_dir)](const std::string& name) {
    return lookup_secret(store, name);
  };
}

}  // namespace quarry::secrets
