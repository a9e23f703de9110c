// The process_* metrics Prometheus client libraries export for their own process (client_golang's
// process collector: resident and virtual memory, CPU seconds, open and max fds, start time), read
// from /proc, and for an SMB run the resident memory of smbd's session (smbd and the child it
// forks for each client connection).
#pragma once
#include <sys/types.h>

#include <string>

namespace perfsim::admin {

// Prometheus text 0.0.4 of this process; "" where /proc cannot be read (then nothing is claimed).
std::string process_metrics_text();

// perfsim_smbd_processes and perfsim_smbd_resident_memory_bytes: every process in the session
// `smbd_pid` leads (perfsim starts smbd in a session of its own; server/README.md). "" for pid <= 0.
std::string smbd_metrics_text(pid_t smbd_pid);

}  // namespace perfsim::admin
