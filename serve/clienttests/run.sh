#!/usr/bin/env bash
# Runs Kafka clients' own integration test suites against kafkasim serve
# and franz-go's kfake and prints the result tables (docs/clienttests.md).
#   serve/clienttests/run.sh                      # the full run: kgo and kafka-go, serve zk/kraft, kfake 3.9/4.1
#   serve/clienttests/run.sh -update-doc docs/clienttests.md   # and rewrite the page's tables
#   serve/clienttests/run.sh -short -targets 'serve zk'        # the CI subset, one target
# Flags: go run ./serve/clienttests/cmd/clienttests -h
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go run ./serve/clienttests/cmd/clienttests "$@"
