// One writer per data directory across processes (SPEC §10): flock-based WriterLock.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "catalog/writer_lock.h"
#include "catalog_fixture.h"
#include "quarry/error.h"

namespace quarry::catalog {
namespace {
using namespace testing_support;
using Clock = std::chrono::steady_clock;

// Child exit statuses.
constexpr int kAcquired = 0;
constexpr int kBusy = 10;
constexpr int kOtherError = 11;

int try_lock_in_child(const std::string& dir, int timeout_ms) {
  try {
    WriterLock lock(dir, timeout_ms);
    return kAcquired;
  } catch (const Error& e) {
    return e.code() == Code::busy ? kBusy : kOtherError;
  } catch (...) {
    return kOtherError;
  }
}

int wait_exit(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

TEST(WriterLock, SecondProcessTimesOutWithBusy) {
  quarry::testing::TempDir dir;
  WriterLock held(dir.path().string(), 1000);
  auto t0 = Clock::now();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(try_lock_in_child(dir.path().string(), 300));
  EXPECT_EQ(wait_exit(pid), kBusy);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  EXPECT_GE(ms, 280);
  EXPECT_LT(ms, 5000);  // roughly the timeout, not forever
}

TEST(WriterLock, ZeroTimeoutFailsAtOnce) {
  quarry::testing::TempDir dir;
  WriterLock held(dir.path().string(), 1000);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(try_lock_in_child(dir.path().string(), 0));
  EXPECT_EQ(wait_exit(pid), kBusy);
}

TEST(WriterLock, SecondProcessSucceedsOnceTheFirstReleases) {
  quarry::testing::TempDir dir;
  auto held = std::make_unique<WriterLock>(dir.path().string(), 1000);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    int first = try_lock_in_child(dir.path().string(), 50);  // proves it is held
    char c = 'x';
    if (write(ready[1], &c, 1) != 1) _exit(kOtherError);
    if (first != kBusy) _exit(kOtherError);
    _exit(try_lock_in_child(dir.path().string(), 10000));
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto t0 = Clock::now();
  held.reset();
  EXPECT_EQ(wait_exit(pid), kAcquired);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  EXPECT_LT(ms, 5000);
}

TEST(WriterLock, KilledHolderReleasesTheLock) {
  quarry::testing::TempDir dir;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    try {
      WriterLock lock(dir.path().string(), 1000);
      char c = 'x';
      if (write(ready[1], &c, 1) != 1) _exit(kOtherError);
      while (true) pause();  // hold it until killed
    } catch (...) {
      _exit(kOtherError);
    }
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  try {
    WriterLock contender(dir.path().string(), 100);
    ADD_FAILURE() << "lock acquired while another process holds it";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::busy);
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_NO_THROW(WriterLock after(dir.path().string(), 2000));
}

TEST(WriterLock, BusyErrorSaysWhatToDo) {
  quarry::testing::TempDir dir;
  WriterLock held(dir.path().string(), 1000);
  // flock locks belong to open file descriptions: a second open in this process conflicts too.
  try {
    WriterLock second(dir.path().string(), 20);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::busy);
    EXPECT_EQ(e.details().at("data_dir"), dir.path().string());
    EXPECT_NE(e.message().find("retry"), std::string::npos);
  }
}

TEST(WriterLock, ReleasedLockCanBeTakenAgain) {
  quarry::testing::TempDir dir;
  { WriterLock a(dir.path().string(), 100); }
  { WriterLock b(dir.path().string(), 100); }
  EXPECT_NO_THROW(WriterLock c(dir.path().string(), 0));
}

TEST(WriterLock, MissingDirectoryIsAnIoError) {
  quarry::testing::TempDir dir;
  try {
    WriterLock lock((dir / "does/not/exist").string(), 10);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::io_error);
  }
}

TEST_F(CatalogTest, CatalogStaysIntactAfterAKilledWriter) {
  cat->kbs().create("k", "{}", who("kb.create", "k", "k"));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // A writer that dies mid-stream: it commits some documents, then is killed.
    try {
      auto c = Catalog::open(path);
      WriterLock lock(dir.path().string(), 1000);
      for (int i = 0;; ++i) {
        auto d = make_doc("k", "child" + std::to_string(i) + ".md");
        c->documents().put(ref(*c, d.kb), d, make_chunks({"child text", "more text"}),
                           who("document.add", "k", d.id));
      }
    } catch (...) {
      _exit(kOtherError);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  // The lock is free again and the catalog is whole; every committed document has its chunks.
  EXPECT_NO_THROW(WriterLock again(dir.path().string(), 1000));
  auto reopened = Catalog::open(path);
  expect_integrity(*reopened);
  auto docs = reopened->documents().list(ref(*reopened, "k"), "", 1000000);
  for (const auto& d : docs)
    EXPECT_EQ(reopened->documents().chunks_of(ref(*reopened, "k"), d.id).size(), 2u);
  EXPECT_EQ(static_cast<std::size_t>(reopened->kbs().stats(ref(*reopened, "k")).chunks),
            docs.size() * 2);
  EXPECT_EQ(search_ids(*reopened, "k", "child", 1000000).size(), docs.size());
  EXPECT_GT(docs.size(), 0u);
}

}  // namespace
}  // namespace quarry::catalog
