// Real ROS 1 peers for the tests: a rosmaster started on a free loopback port, rospy scripts and
// the ROS command-line tools run under /usr/bin/python3, each a child process that the test
// stops in its teardown (nothing is left behind).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "takt/port.h"
#include "takt/port_io.h"

namespace ros1_test {

// A loopback TCP port free now, for a master a test starts. It is taken below the kernel's
// ephemeral range (32768-60999 by default): a port from a bind to 0 is an ephemeral one, which an
// outgoing connection of a test running beside this one may take before the master binds it,
// and rosmaster then exits with "Address already in use". Two tests choosing the same port at
// once stay possible (rarely); the fixture starts the master again on another port then.
inline uint16_t free_port() {
  static uint32_t seed = (uint32_t)getpid() * 2654435761u ^ (uint32_t)takt_time_now();
  for (int i = 0; i < 1000; i++) {
    seed = seed * 1664525u + 1013904223u;
    uint16_t p = (uint16_t)(20000 + (seed >> 8) % 12000);
    takt_io_t l = TAKT_IO_CLOSED;
    if (takt_io_tcp_listen("127.0.0.1", p, 1, &l) != TAKT_OK) continue;
    takt_io_close(&l);
    return p;
  }
  return 0;
}

// A child process with its stdout (and stderr) readable by the test.
class Proc {
 public:
  Proc() = default;
  Proc(const Proc &) = delete;
  Proc &operator=(const Proc &) = delete;
  ~Proc() { stop(); }

  // Start argv[0] (searched in PATH) in a process group of its own. The child is ended with
  // SIGKILL if the test process dies before its teardown (PR_SET_PDEATHSIG): a crashed test
  // leaves no master or peer behind.
  bool start(const std::vector<std::string> &argv) {
    stop();  // a process started before: ended, its output forgotten
    out_.clear();
    status_ = -1;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    std::vector<char *> args;
    for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {  // only async-signal-safe calls until exec
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      setpgid(0, 0);
      dup2(fds[1], 1);
      dup2(fds[1], 2);
      execvp(args[0], args.data());
      _exit(127);
    }
    close(fds[1]);
    if (pid > 0) setpgid(pid, pid);  // as the child does: whichever runs first
    if (pid < 0) {
      close(fds[0]);
      return false;
    }
    pid_ = pid;
    out_fd_ = fds[0];
    return true;
  }

  // Read output until `needle` appears (true) or the process ends / timeout_ms passes.
  bool wait_for(const std::string &needle, int timeout_ms) {
    int64_t end = takt_time_now() + (int64_t)timeout_ms * TAKT_NS_PER_MS;
    while (out_.find(needle) == std::string::npos) {
      int64_t left = (end - takt_time_now()) / TAKT_NS_PER_MS;
      if (left <= 0 || out_fd_ < 0) return false;
      struct pollfd p = {out_fd_, POLLIN, 0};
      if (poll(&p, 1, (int)left) <= 0) continue;
      char buf[4096];
      ssize_t r = read(out_fd_, buf, sizeof buf);
      if (r <= 0) {
        close(out_fd_);
        out_fd_ = -1;
        return out_.find(needle) != std::string::npos;
      }
      out_.append(buf, (size_t)r);
    }
    return true;
  }

  // Wait for the exit (reading the output); the exit status, or -1 after timeout_ms.
  int wait_exit(int timeout_ms) {
    wait_for("\x01never\x01", timeout_ms);  // drains output until EOF or the timeout
    if (pid_ < 0) return status_;
    int64_t end = takt_time_now() + (int64_t)timeout_ms * TAKT_NS_PER_MS;
    for (;;) {
      int st = 0;
      pid_t r = waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return status_;
      }
      if (takt_time_now() > end) return -1;
      takt_sleep_until(takt_time_now() + 10 * TAKT_NS_PER_MS);
    }
  }

  void stop() {
    if (pid_ > 0) {
      kill(-pid_, SIGTERM);
      int64_t end = takt_time_now() + 3 * TAKT_NS_PER_S;
      int st;
      while (waitpid(pid_, &st, WNOHANG) == 0) {
        if (takt_time_now() > end) {
          kill(-pid_, SIGKILL);
          waitpid(pid_, &st, 0);
          break;
        }
        takt_sleep_until(takt_time_now() + 10 * TAKT_NS_PER_MS);
      }
      pid_ = -1;
    }
    if (out_fd_ >= 0) close(out_fd_);
    out_fd_ = -1;
  }

  // End the process group at once (SIGKILL: no unregistration, no goodbye on any socket).
  void kill_now() {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      int st;
      waitpid(pid_, &st, 0);
      pid_ = -1;
    }
    if (out_fd_ >= 0) close(out_fd_);
    out_fd_ = -1;
  }

  // Send sig to the process (not its group).
  void signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }

  // True once the process has ended (its status kept for wait_exit).
  bool exited() {
    if (pid_ < 0) return true;
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) != pid_) return false;
    pid_ = -1;
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return true;
  }

  // The output so far: what is readable now is read first (no wait).
  const std::string &drain() {
    while (out_fd_ >= 0) {
      struct pollfd p = {out_fd_, POLLIN, 0};
      if (poll(&p, 1, 0) <= 0) break;
      char buf[4096];
      ssize_t r = read(out_fd_, buf, sizeof buf);
      if (r <= 0) {
        close(out_fd_);
        out_fd_ = -1;
        break;
      }
      out_.append(buf, (size_t)r);
    }
    return out_;
  }

  const std::string &output() const { return out_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int status_ = -1;
  std::string out_;
};

}  // namespace ros1_test
