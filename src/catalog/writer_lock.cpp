#include "catalog/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/layout.h"
#include "quarry/error.h"

namespace quarry::catalog {

WriterLock::WriterLock(const std::string& data_dir, int timeout_ms) {
  const std::string path = core::Layout{data_dir}.write_lock_path();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(Code::io_error, "cannot open " + path + ": " + std::strerror(errno));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto wait = std::chrono::milliseconds(1);
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      int e = errno;
      ::close(fd_);
      throw Error(Code::io_error, "cannot lock " + path + ": " + std::strerror(e));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(fd_);
      throw Error(Code::busy,
                  "another process is writing to " + data_dir + " and did not finish within " +
                      std::to_string(timeout_ms) + " ms; retry, or raise --lock-timeout",
                  {{"data_dir", data_dir}});
    }
    std::this_thread::sleep_for(wait);
    if (wait < std::chrono::milliseconds(50)) wait *= 2;
  }
}

WriterLock::~WriterLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

}  // namespace quarry::catalog
