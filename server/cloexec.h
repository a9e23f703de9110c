// Every descriptor the server opens is close-on-exec, so smbd and its helpers (started while the
// server runs: smbd.h) never hold a listener or a connection of ours. Boost.Asio opens sockets
// with socket() and accepts with accept(), neither with CLOEXEC (its epoll, eventfd and timerfd
// have it), so listeners are opened here with SOCK_CLOEXEC and handed to the acceptor, and an
// accepted socket is marked at once. The moment between accept() and the mark is covered on the
// other side: core/subprocess closes every descriptor above stdio in the child.
#pragma once
#include <fcntl.h>
#include <sys/socket.h>

#include <boost/system/error_code.hpp>

namespace perfsim::server {

// acceptor.open(protocol) with SOCK_CLOEXEC.
template <typename Acceptor, typename Protocol>
void open_cloexec(Acceptor& acceptor, const Protocol& protocol, boost::system::error_code& ec) {
  const int fd = ::socket(protocol.family(), protocol.type() | SOCK_CLOEXEC, protocol.protocol());
  if (fd < 0) {
    ec.assign(errno, boost::system::system_category());
    return;
  }
  acceptor.assign(protocol, fd, ec);
  if (ec) ::close(fd);
}

// An accepted socket (or any Asio descriptor) marked close-on-exec.
template <typename Socket>
void mark_cloexec(Socket& s) {
  if (s.is_open()) ::fcntl(s.native_handle(), F_SETFD, FD_CLOEXEC);
}

}  // namespace perfsim::server
