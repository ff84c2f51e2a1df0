#!/usr/bin/env bash
# Deploy under load: 50 clients pull a collection of two models while its deployment is
# activated and rolled back, for SECONDS (60 by default); every access must end with both
# models of one deployment, whole and SHA-256-verified; then the same through nginx in front of
# two replicas on PostgreSQL, one of them killed and restarted midway
# (ReplicasEndToEndTests; needs postgresql and nginx). CI runs both for 10 s.
#
#   Benchmarks/server/deploy-under-load.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
MLKIT_LOAD_SECONDS="${1:-60}" swift test --filter 'DeployUnderLoadTests|ReplicasEndToEndTests/loadWithAReplicaKilled'
