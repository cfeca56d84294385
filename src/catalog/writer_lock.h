// One writer per data directory across processes (SPEC §10). A write operation spans the
// catalog and files on disk (Markdown, raw upload), so SQLite's own lock is not enough: the
// whole operation holds an flock(2) on <data>/write.lock. A second writer polls until
// `timeout_ms` and then fails with Error(busy). Readers never take it. The kernel drops the
// lock when a process dies, so a killed writer never wedges the directory.
#pragma once

#include <string>

namespace quarry::catalog {

class WriterLock {
 public:
  WriterLock(const std::string& data_dir, int timeout_ms);
  ~WriterLock();
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace quarry::catalog
