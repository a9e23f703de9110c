#include "tests/common/served_host.h"

#include <utility>

namespace perfsim::testing {

ServedHost::ServedHost(std::shared_ptr<replayer::SimulatedHost> host, ServeOptions opt)
    : host_(std::move(host)), opt_(std::move(opt)) {}

// A serve run of the one given host, as perfsim serve assembles its runs (serve/run.h): no
// journal but the test's recorder, no signal handling, the test's limits.
Status ServedHost::start() {
  serve::Config cfg;
  cfg.given.push_back({opt_.address + ":0", host_, "test"});
  cfg.threads = opt_.threads;
  cfg.idle_timeout = opt_.idle_timeout;
  cfg.max_connections = opt_.max_connections;
  cfg.auth_timeout_s = opt_.auth_timeout_s;
  cfg.max_pdu_size = opt_.max_pdu_size;
  cfg.association = opt_.association;
  cfg.recorder = opt_.recorder;
  cfg.handle_signals = false;
  cfg.log = opt_.log ? opt_.log : [](std::string_view) {};
  run_ = std::make_unique<serve::ServeRun>();
  if (serve::Failure f = run_->run(std::move(cfg)); !f.ok()) return Status::IOError(f.message);
  port_ = run_->port(0);
  return Status::Ok();
}

void ServedHost::stop() {
  if (run_) run_->stop();
}

server::Server& ServedHost::server() { return run_->server(); }

}  // namespace perfsim::testing
