#include "tests/common/served_host.h"

#include <utility>

#include "server/winreg_handler.h"

namespace perfsim::testing {

ServedHost::ServedHost(std::shared_ptr<replayer::SimulatedHost> host, ServeOptions opt)
    : host_(std::move(host)), opt_(std::move(opt)) {}

Status ServedHost::start() {
  server::ServerConfig cfg;
  auto factory = std::make_shared<server::WinregHandlerFactory>(host_, opt_.association);
  factory->serve_tcp();
  if (opt_.recorder) factory->observe(opt_.recorder, journal::Transport::kTcp);
  cfg.listeners.push_back({opt_.address + ":0", "test", factory});
  cfg.threads = opt_.threads;
  cfg.idle_timeout = opt_.idle_timeout;
  cfg.max_pdu_size = opt_.max_pdu_size;
  cfg.handle_signals = false;
  cfg.log = opt_.log ? opt_.log : [](std::string_view) {};
  server_ = std::make_unique<server::Server>(std::move(cfg));
  if (Status s = server_->start(); !s.ok()) return s;
  port_ = server_->bound().at(0).port;
  return Status::Ok();
}

void ServedHost::stop() {
  if (server_) server_->stop();
}

}  // namespace perfsim::testing
