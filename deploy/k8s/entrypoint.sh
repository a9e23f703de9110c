#!/bin/sh
# One pod of the perfsim StatefulSet: its ordinal (the pod name's last field, perfsim-fleet-K) is
# its shard. The fleet's address range is made local on lo (so perfsim binds its hosts' addresses
# without adding them one by one), then perfsim serves shard K of SHARDS over TCP and SMB.
set -eu
: "${SHARDS:?SHARDS must be set (the StatefulSet's replicas)}"
: "${FLEET_RANGE:?FLEET_RANGE must be set (the fleet file's addresses, e.g. 10.200.0.0/15)}"
K="${POD_NAME:-$(hostname)}"
K="${K##*-}"
ip route replace local "$FLEET_RANGE" dev lo
exec perfsim serve --fleet /etc/perfsim/fleet.toml --shard "$K/$SHARDS" --smb --allow-remote \
  --admin "0.0.0.0:8135" --json "$@"
